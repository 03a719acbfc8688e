package io.github.sparkkinesis.source.realtime

import org.apache.spark.sql.catalyst.InternalRow

import io.github.sparkkinesis.metadata.{ReadStats, ShardEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.reading.{RowBuilder, ShardPages, TaskShard}

/** What a shard's feed hands its task, in the shard's order. */
private[realtime] sealed trait FeedItem

private[realtime] object FeedItem {

  /**
   * The rows of the Kinesis record with `sequenceNumber` (none when every sub-record was dropped as misrouted, or was
   * handed over before the shard's start), its arrival time and its size.
   */
  final case class Record(
      shard: ShardRef,
      rows: Array[InternalRow],
      arrivalMs: Long,
      sequenceNumber: String,
      bytes: Long)
      extends FeedItem {

    /** The position after the record, which the shard reaches once its last row has been handed over. */
    def after: ShardPosition = ShardPosition.AfterSequenceNumber(sequenceNumber)

    /** Where the shard stands once row `index` has been handed over: inside the aggregate until its last row. */
    def positionAfterRow(index: Int): ShardPosition =
      if (index >= rows.length - 1) after
      else ShardPosition.AfterSubSequenceNumber(sequenceNumber, RowBuilder.subSequenceNumberOf(rows(index)))
  }

  /** The shard is closed and every record of it has been fed; `children` are the ones its last page named (AWS). */
  final case class Ended(shard: ShardRef, children: Seq[String]) extends FeedItem

  /** The feed failed; the task fails with `error`. */
  final case class Failed(shard: ShardRef, error: Throwable) extends FeedItem
}

/**
 * Reads one shard of a real-time task from `shard.start` for as long as the task runs, on a thread of its own: each
 * page's records go to `emit` as [[FeedItem.Record]]s, which may block while the task's queue is full. An empty page is
 * followed by a wait on the pages (`awaitMs` at most for a subscription; polling paces its own calls). Stops at the
 * shard's end, or when interrupted.
 */
private[realtime] final class ShardFeed(
    val shard: TaskShard,
    pages: ShardPages,
    recordsPerFetch: Int,
    dropMisrouted: Boolean,
    emit: FeedItem => Unit,
    awaitMs: Long = ShardFeed.AwaitMs)
    extends Runnable {

  val ref: ShardRef = ShardRef(shard.stream, shard.shardId)
  private val rows = new RowBuilder(shard.stream, shard.shardId, shard.start)
  private val misrouted = if (dropMisrouted) shard.hashKeyRange else None
  @volatile private var recordsRead = 0L
  @volatile private var bytesRead = 0L
  @volatile private var millisBehind = 0L
  @volatile private var lastArrivalMs: Option[Long] = None

  /** The last record read, fed (or being fed) to the task, whose rows may not all have been handed over yet. */
  @volatile private var lastFed: Option[String] = None

  override def run(): Unit =
    try {
      while (!pages.isEnded && !Thread.currentThread().isInterrupted) {
        pages.fetch(Long.MaxValue, recordsPerFetch).foreach { page =>
          millisBehind = page.millisBehindLatest
          page.records.foreach { record =>
            recordsRead += 1
            lastFed = Some(record.sequenceNumber)
            bytesRead += record.data.length
            lastArrivalMs = Some(record.approximateArrivalTimestampMillis)
            emit(FeedItem.Record(
              ref,
              rows.rows(record, misrouted).toArray,
              record.approximateArrivalTimestampMillis,
              record.sequenceNumber,
              record.data.length.toLong))
          }
          if (pages.isEnded) emit(FeedItem.Ended(ref, page.childShardIds))
          else if (page.records.isEmpty) pages.awaitMore(awaitMs)
        }
      }
    } catch {
      case _: InterruptedException => () // the task ended: nobody waits for more
      case e: Throwable if Thread.currentThread().isInterrupted => () // a call cut short by the task's end
      case e: Throwable => emit(FeedItem.Failed(ref, e))
    }

  /**
   * Where the task stands in this shard at `handed`, and what the feed saw, as the batch's end record of the shard:
   * records lie ahead of `handed` when the shard's tip does, or when rows fed were not all handed over.
   */
  def endRecord(batch: Long, handed: ShardPosition): ShardEndRecord = ShardEndRecord(
    shard.stream,
    shard.shardId,
    batch,
    shard.start,
    handed,
    recordsRead,
    Some(ReadStats(
      millisBehind,
      moreAvailable = millisBehind > 0 ||
        (handed != ShardPosition.ShardEnd && lastFed.exists(seq => handed != ShardPosition.AfterSequenceNumber(seq))),
      boundReached = false,
      lastArrivalMs,
      bytesRead,
      pages.getRecordsCalls,
      pages.throttledCalls)))

  /** Hands the pages back: a subscription is cancelled, since rows fed may not all have been handed over. */
  def close(): Unit = pages.close(handedOver = false)
}

private[realtime] object ShardFeed {

  /** Longest wait for a subscription's next event at the tip before the feed looks again. */
  val AwaitMs = 1000L
}
