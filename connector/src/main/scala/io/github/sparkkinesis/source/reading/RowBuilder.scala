package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparkkinesis.aggregation.{KplDeaggregator, UserRecord}
import io.github.sparkkinesis.client.{HashKeyRange, KinesisRecord, StreamRef}

/**
 * Builds rows of [[io.github.sparkkinesis.source.KinesisSchema]] for one shard; the stream and shard names are encoded
 * once, not per record.
 */
private[source] final class RowBuilder(streamName: String, shardId: String) {
  private val stream = UTF8String.fromString(StreamRef.nameOf(streamName))
  private val shard = UTF8String.fromString(shardId)

  /**
   * The rows of one Kinesis record: one per user record of a KPL aggregate (without those whose hash key lies outside
   * `misrouted`, when given), else one.
   */
  def rows(record: KinesisRecord, misrouted: Option[HashKeyRange]): Iterator[InternalRow] = {
    val users = KplDeaggregator.subRecords(record.data) match {
      case Some(subRecords) =>
        misrouted.fold(subRecords)(range => subRecords.filter(u => range.contains(KplDeaggregator.hashKey(u))))
      case None => UserRecord(record.data, record.partitionKey, None, 0L) :: Nil
    }
    users.iterator.map(row(record, _))
  }

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
