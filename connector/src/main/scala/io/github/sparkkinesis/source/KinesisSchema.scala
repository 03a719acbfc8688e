package io.github.sparkkinesis.source

import org.apache.spark.sql.types._

/**
 * The fixed schema of the source's rows: one row per user record (KPL sub-records each get their own). The last column,
 * `stream`, repeats `streamName` under the name Databricks' connector gives it, so that notebooks written for it run
 * unchanged.
 */
object KinesisSchema {
  val schema: StructType = StructType(Seq(
    StructField("data", BinaryType, nullable = false),
    StructField("streamName", StringType, nullable = false),
    StructField("partitionKey", StringType, nullable = false),
    StructField("sequenceNumber", StringType, nullable = false),
    StructField("approximateArrivalTimestamp", TimestampType, nullable = false),
    StructField("shardId", StringType, nullable = false),
    StructField("subSequenceNumber", LongType, nullable = false),
    StructField("stream", StringType, nullable = false)))
}
