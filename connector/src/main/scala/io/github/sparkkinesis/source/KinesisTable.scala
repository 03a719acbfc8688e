package io.github.sparkkinesis.source

import java.util

import scala.util.Try

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sparkkinesis.ExecutorLocations
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{
  SupportsRead,
  SupportsRowLevelOperations,
  SupportsWrite,
  Table,
  TableCapability,
  TruncatableTable
}
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.write.{
  LogicalWriteInfo,
  RowLevelOperationBuilder,
  RowLevelOperationInfo,
  WriteBuilder
}
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
 * Batch writes are offered to a table defined in a catalog (`INSERT INTO`) and to the provider's own append (see
 * [[KinesisTable.BatchWriteMarker]]): Spark refuses `df.write.save()` in its default mode (error if exists) for any
 * table that offers them, so user writes reach the provider's V1 entry point first, which checks the mode and then
 * appends through this table. Statements that would remove records (DELETE, TRUNCATE TABLE, INSERT OVERWRITE) reach the
 * table, which refuses them saying what to use instead; Spark refuses UPDATE and MERGE itself, since a table that
 * accepts any columns is not one it resolves them against.
 *
 * @param options
 *   the options of a read or write, or a catalog's properties of the table (see [[CatalogTables]])
 * @param requestedSchema
 *   the schema Spark handed the provider: a reader's `.schema(...)` or a writer's input
 */
final class KinesisTable(options: Map[String, String], requestedSchema: Option[StructType])
    extends Table with SupportsRead with SupportsWrite with TruncatableTable with SupportsRowLevelOperations {

  private val inCatalog = CatalogTables.isCatalogTable(options)

  /** Names the streams however the options spell them; bad options fail elsewhere, with their own message. */
  override def name(): String = {
    val given = Try(AliasResolution.resolve(options).options).getOrElse(Map.empty[String, String])
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
    if (inCatalog || options.get(KinesisTable.BatchWriteMarker).contains("true")) {
      capabilities.add(TableCapability.BATCH_WRITE)
    }
    // So that INSERT OVERWRITE reaches the write builder, which refuses it in words (Spark's check only names the
    // missing capability).
    if (inCatalog) capabilities.add(TableCapability.TRUNCATE)
    capabilities
  }

  override def properties(): util.Map[String, String] = CatalogTables.shownProperties(options).asJava

  override def truncateTable(): Boolean = throw CatalogTables.refused("TRUNCATE TABLE (or DELETE without WHERE)")

  override def newRowLevelOperationBuilder(info: RowLevelOperationInfo): RowLevelOperationBuilder =
    throw CatalogTables.refused(info.command().toString)

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder = {
    requestedSchema.filter(_ != KinesisSchema.schema).foreach { _ =>
      throw new IllegalArgumentException(
        s"The aws-kinesis source has a fixed schema; remove .schema(...) from the reader. Its schema is " +
          KinesisSchema.schema.simpleString)
    }
    val source = KinesisSourceOptions.parse(options ++ scanOptions.asScala)
    ShardEndStores.checkAtLoad(source, SparkSession.active.sparkContext.hadoopConfiguration)
    new ScanBuilder {
      override def build(): Scan = new KinesisScan(source)
    }
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new KinesisWriteBuilder(KinesisSinkOptions.parse(options ++ info.options.asScala), info)
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
