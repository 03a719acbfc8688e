package io.github.sparkkinesis.source

import java.util

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.github.sparkkinesis.client.SharedClients
import io.github.sparkkinesis.options.KinesisSourceOptions

/** A Kinesis stream as a Spark table that supports micro-batch reads. */
final class KinesisTable(options: KinesisSourceOptions) extends Table with SupportsRead {

  override def name(): String = s"kinesis:${options.streamName}"

  override def schema(): StructType = KinesisSchema.schema

  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.MICRO_BATCH_READ)

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder = new ScanBuilder {
    override def build(): Scan = new KinesisScan(options)
  }
}

/** The scan of a [[KinesisTable]]; its description names the stream and never the credentials. */
final class KinesisScan(options: KinesisSourceOptions) extends Scan {

  override def readSchema(): StructType = KinesisSchema.schema

  override def description(): String = s"KinesisScan[$options]"

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
    val hadoopConf = new Configuration(SparkSession.active.sparkContext.hadoopConfiguration)
    new KinesisMicroBatchStream(options, checkpointLocation, hadoopConf, SharedClients)
  }
}
