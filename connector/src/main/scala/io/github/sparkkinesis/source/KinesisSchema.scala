package io.github.sparkkinesis.source

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparkkinesis.aggregation.UserRecord
import io.github.sparkkinesis.client.{KinesisRecord, StreamRef}

/**
 * The fixed schema of the source's rows: one row per user record (KPL sub-records each get their own). The last
 * column, `stream`, repeats `streamName` under the name Databricks' connector gives it, so that notebooks written for
 * it run unchanged.
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

/** Builds rows for one shard; the stream and shard names are encoded once, not per record. */
private[source] final class RowBuilder(streamName: String, shardId: String) {
  private val stream = UTF8String.fromString(StreamRef.nameOf(streamName))
  private val shard = UTF8String.fromString(shardId)

  def row(record: KinesisRecord, user: UserRecord): InternalRow = new GenericInternalRow(Array[Any](
    user.data,
    stream,
    UTF8String.fromString(user.partitionKey),
    UTF8String.fromString(record.sequenceNumber),
    record.approximateArrivalTimestampMillis * 1000L,
    shard,
    user.subSequenceNumber,
    stream))
}
