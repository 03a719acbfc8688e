package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparkkinesis.aggregation.{KplDeaggregator, UserRecord}
import io.github.sparkkinesis.client.{HashKeyRange, KinesisRecord, StreamRef}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.KinesisSchema

/**
 * Builds rows of [[io.github.sparkkinesis.source.KinesisSchema]] for one shard read from `start`; the stream and shard
 * names are encoded once, not per record.
 */
private[source] final class RowBuilder(streamName: String, shardId: String, start: ShardPosition) {
  private val stream = UTF8String.fromString(StreamRef.nameOf(streamName))
  private val shard = UTF8String.fromString(shardId)

  /** The aggregate `start` stands inside, and its last sub-record handed over before: those are not rows again. */
  private val handedBefore: Option[ShardPosition.AfterSubSequenceNumber] = start match {
    case within: ShardPosition.AfterSubSequenceNumber => Some(within)
    case _ => None
  }

  /**
   * The rows of one Kinesis record: one per user record of a KPL aggregate (without those whose hash key lies outside
   * `misrouted`, when given, and those handed over before `start`), else one.
   */
  def rows(record: KinesisRecord, misrouted: Option[HashKeyRange]): Iterator[InternalRow] = {
    val users = KplDeaggregator.subRecords(record.data) match {
      case Some(subRecords) =>
        misrouted.fold(subRecords)(range => subRecords.filter(u => range.contains(KplDeaggregator.hashKey(u))))
      case None => UserRecord(record.data, record.partitionKey, None, 0L) :: Nil
    }
    val fresh = handedBefore.filter(_.sequenceNumber == record.sequenceNumber)
      .fold(users)(h => users.filter(_.subSequenceNumber > h.subSequenceNumber))
    // Encoded once per Kinesis record, not per user record: an aggregate's rows share them.
    val sequenceNumber = UTF8String.fromString(record.sequenceNumber)
    val arrivalMicros = record.approximateArrivalTimestampMillis * 1000L
    var lastKey: String = null
    var lastKeyUtf8: UTF8String = null
    fresh.iterator.map { user =>
      // The KPL's rows take their keys from the aggregate's table, one String per key: equal keys are the same object.
      if (!(user.partitionKey eq lastKey)) {
        lastKey = user.partitionKey
        lastKeyUtf8 = UTF8String.fromString(lastKey)
      }
      new GenericInternalRow(
        Array[Any](
          user.data,
          stream,
          lastKeyUtf8,
          sequenceNumber,
          arrivalMicros,
          shard,
          user.subSequenceNumber,
          stream))
    }
  }
}

private[source] object RowBuilder {

  /** The user record's sub-sequence number in a row built here (column `subSequenceNumber`). */
  def subSequenceNumberOf(row: InternalRow): Long = row.getLong(SubSequenceNumberColumn)

  private val SubSequenceNumberColumn = KinesisSchema.schema.fieldIndex("subSequenceNumber")
}
