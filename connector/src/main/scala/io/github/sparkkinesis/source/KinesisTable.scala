package io.github.sparkkinesis.source

import java.util

import scala.util.Try

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sparkkinesis.ExecutorLocations
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, Table, TableCapability}
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.github.sparkkinesis.SparkThreadsClassLoading
import io.github.sparkkinesis.client.SharedClients
import io.github.sparkkinesis.metadata.ShardEndStores
import io.github.sparkkinesis.options.{
  AliasResolution,
  KinesisOptionsRegistry,
  KinesisSinkOptions,
  KinesisSourceOptions
}
import io.github.sparkkinesis.sink.KinesisWriteBuilder
import io.github.sparkkinesis.source.realtime.{RealTimeSupport, StreamArgs}

/**
 * A Kinesis stream as a Spark table: micro-batch and bounded batch reads, and batch or streaming appends of any schema
 * (the sink checks its columns itself). The options are parsed for the side that is used, when it is used.
 *
 * Batch writes are offered only to the provider's own append (see [[KinesisTable.BatchWriteMarker]]): Spark refuses
 * `df.write.save()` in its default mode (error if exists) for any table that offers them, so user writes reach the
 * provider's V1 entry point first, which checks the mode and then appends through this table.
 *
 * @param requestedSchema
 *   the schema Spark handed the provider: a reader's `.schema(...)` or a writer's input
 */
final class KinesisTable(properties: Map[String, String], requestedSchema: Option[StructType])
    extends Table with SupportsRead with SupportsWrite {

  /** Names the streams however the options spell them; bad options fail elsewhere, with their own message. */
  override def name(): String = {
    val given = Try(AliasResolution.resolve(properties).options).getOrElse(Map.empty[String, String])
    val streams =
      Seq(KinesisOptionsRegistry.StreamName, KinesisOptionsRegistry.StreamARN).flatMap(o => given.get(o.key))
    s"kinesis:${if (streams.isEmpty) "<per row>" else streams.mkString(",")}"
  }

  override def schema(): StructType = KinesisSchema.schema

  override def capabilities(): util.Set[TableCapability] = {
    val capabilities = util.EnumSet.of(
      TableCapability.MICRO_BATCH_READ,
      TableCapability.BATCH_READ,
      TableCapability.STREAMING_WRITE,
      TableCapability.ACCEPT_ANY_SCHEMA)
    if (properties.get(KinesisTable.BatchWriteMarker).contains("true")) capabilities.add(TableCapability.BATCH_WRITE)
    capabilities
  }

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder = {
    requestedSchema.filter(_ != KinesisSchema.schema).foreach { _ =>
      throw new IllegalArgumentException(
        s"The aws-kinesis source has a fixed schema; remove .schema(...) from the reader. Its schema is " +
          KinesisSchema.schema.simpleString)
    }
    val options = KinesisSourceOptions.parse(properties ++ scanOptions.asScala)
    ShardEndStores.checkAtLoad(options, SparkSession.active.sparkContext.hadoopConfiguration)
    new ScanBuilder {
      override def build(): Scan = new KinesisScan(options)
    }
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new KinesisWriteBuilder(KinesisSinkOptions.parse(properties ++ info.options.asScala), info)
}

object KinesisTable {

  /** The option with which the provider's own append asks for a table that offers batch writes. */
  val BatchWriteMarker = "sparkkinesis.internal.batchWrite"
}

/** The scan of a [[KinesisTable]]; its description names the stream and never the credentials. */
final class KinesisScan(options: KinesisSourceOptions) extends Scan {

  override def readSchema(): StructType = KinesisSchema.schema

  // Spark's SQL tab re-creates them by class name, which it cannot for a connector added as session artifacts.
  override def supportedCustomMetrics(): Array[CustomMetric] =
    if (SparkThreadsClassLoading.connectorLoads()) SourceMetrics.supported else Array.empty

  override def description(): String = s"KinesisScan[$options]"

  override def toBatch: Batch =
    new KinesisBatch(options, SharedClients, () => SparkSession.active.sparkContext.defaultParallelism)

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
    if (options.endingPosition.isDefined) {
      throw new IllegalArgumentException("Option kinesis.endingPosition is for batch reads (spark.read) only: a " +
        "streaming query reads on as records arrive. Remove it, or use Trigger.AvailableNow to stop at the records " +
        "there when each run starts.")
    }
    val spark = SparkSession.active
    val hadoopConf = new Configuration(spark.sparkContext.hadoopConfiguration)
    RealTimeSupport.stream(StreamArgs(
      options,
      checkpointLocation,
      hadoopConf,
      SharedClients,
      () => spark.sparkContext.defaultParallelism,
      metadataOnExecutorDisks =
        ShardEndStores.onExecutorDisks(options, checkpointLocation, hadoopConf, localMode = spark.sparkContext.isLocal),
      executors = () => ExecutorLocations.sorted()))
  }
}
