package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparkkinesis.aggregation.UserRecord
import io.github.sparkkinesis.client.{KinesisRecord, StreamRef}

/**
 * Builds rows of [[io.github.sparkkinesis.source.KinesisSchema]] for one shard; the stream and shard names are encoded
 * once, not per record.
 */
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
