package io.github.sparkkinesis.source.realtime

import org.apache.spark.sql.catalyst.InternalRow
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.RecordBatch
import io.github.sparkkinesis.metadata.{ReadStats, ShardEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.reading.{FetchBudget, FetchShare, RecordSize, RowBuilder, ShardPages, TaskShard}

/** What a shard's feed hands its task, in the shard's order. */
private[source] sealed trait FeedItem

private[source] object FeedItem {

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
 * Reads one shard of a real-time task from `shard.start` for as long as the task runs, on a thread of its own: first
 * the records an earlier task's reader of these `pages` fetched but did not hand over (`pending`), then each page's
 * records go to `emit` as [[FeedItem.Record]]s, which may block while the task's queue is full. Each page is asked for
 * with a record limit that keeps it within the share of the task's fetch `budget` it holds until its records are
 * queued, judged by the shard's last page (`size`: what an earlier task's reader of these pages learnt, else
 * [[RecordSize.Unknown]]): what a task holds fetched but not yet queued stays bounded by the task, not by its shards.
 * Only a page read on demand (polling) borrows beyond the feed's equal share, and only once its call is due, so no loan
 * waits out a shard's pacing (a throttled call's back-off keeps it); a subscription's page takes what was pushed. An
 * empty page is followed by a wait on the pages (`awaitMs` at most for a subscription; polling paces its own calls).
 * Stops at the shard's end, or when interrupted; stopped by an interrupt, it knows every record it fetched and did not
 * emit ([[unsent]]), so its pages can go on in the next batch ([[WarmShards]]).
 */
private[realtime] final class ShardFeed(
    val shard: TaskShard,
    pages: ShardPages,
    recordsPerFetch: Int,
    dropMisrouted: Boolean,
    emit: FeedItem => Unit,
    budget: FetchBudget,
    awaitMs: Long = ShardFeed.AwaitMs,
    pending: Vector[FeedItem.Record] = Vector.empty,
    walkedBefore: Long = 0L,
    size: RecordSize = RecordSize.Unknown)
    extends Runnable {

  val ref: ShardRef = ShardRef(shard.stream, shard.shardId)
  private val log = LoggerFactory.getLogger(getClass)
  private val rows = new RowBuilder(shard.stream, shard.shardId, shard.start)
  private val misrouted = if (dropMisrouted) shard.hashKeyRange else None
  private val callsBefore = pages.getRecordsCalls
  private val throttledBefore = pages.throttledCalls
  @volatile private var recordsRead = 0L
  @volatile private var bytesRead = 0L
  @volatile private var millisBehind = 0L
  @volatile private var lastArrivalMs: Option[Long] = None

  /** This shard's average record, from its last page with records. */
  @volatile private var recordSize = size

  /** The records fetched (or taken over) and not yet emitted, in order. */
  @volatile private var toEmit = pending

  /** Empty pages with records ahead (MillisBehindLatest above 0) walked since the last record, by this feed's pages. */
  @volatile private var walkedPages = walkedBefore

  /** The last record fed (or being fed) to the task, whose rows may not all have been handed over yet. */
  @volatile private var lastFed: Option[String] = None

  /** Whether the feed stopped because its task ended, with nothing fetched lost ([[unsent]] holds what it kept). */
  @volatile private var stoppedByTask = false

  override def run(): Unit =
    try {
      emitPending()
      while (!pages.isEnded && !Thread.currentThread().isInterrupted) {
        val page =
          if (!pages.awaitNextCall()) fetchAndEmit(budget.equalShare)
          else budget.holding(if (millisBehind > 0) FetchBudget.LoanWaitMs else 0L)(fetchAndEmit)
        page.foreach { p =>
          if (pages.isEnded) emit(FeedItem.Ended(ref, p.childShardIds))
          else if (p.records.isEmpty) pages.awaitMore(awaitMs)
        }
      }
      stoppedByTask = !pages.isEnded
    } catch {
      case _: InterruptedException => stoppedByTask = true // the task ended: nobody waits for more
      case _: Throwable if Thread.currentThread().isInterrupted => // a call cut short by the task's end
        stoppedByTask = true
      case e: Throwable => emit(FeedItem.Failed(ref, e))
    }

  /** Fetches the next page within `share` and emits its records. */
  private def fetchAndEmit(share: FetchShare): Option[RecordBatch] =
    pages.fetch(Long.MaxValue, share.records(recordSize, recordsPerFetch)).map { page =>
      millisBehind = page.millisBehindLatest
      toEmit = page.records.map { record =>
        FeedItem.Record(
          ref,
          rows.rows(record, misrouted).toArray,
          record.approximateArrivalTimestampMillis,
          record.sequenceNumber,
          record.data.length.toLong)
      }.toVector
      learnRecordSize(toEmit)
      noteWalk(page.records.isEmpty)
      emitPending()
      page
    }

  private def learnRecordSize(page: Vector[FeedItem.Record]): Unit = if (page.nonEmpty) {
    val bytes = page.foldLeft(0L)(_ + _.bytes)
    val rows = page.foldLeft(0L)((n, r) => n + RealTimeRows.rowsOf(r))
    recordSize = RecordSize(math.max(1L, (bytes + page.size - 1) / page.size), rows.toDouble / page.size)
  }

  /** Emits the records fetched, each forgotten only once emitted, so an interrupt loses none of them. */
  private def emitPending(): Unit = while (toEmit.nonEmpty) {
    val record = toEmit.head
    lastFed = Some(record.sequenceNumber)
    emit(record)
    toEmit = toEmit.tail
    recordsRead += 1
    bytesRead += record.bytes
    pages.metrics.recordsRead.inc()
    pages.metrics.bytesRead.inc(record.bytes)
    lastArrivalMs = Some(record.arrivalMs)
  }

  /**
   * Counts the walk across empty pages with records ahead (a sparse shard, or AWS near the trim horizon) and logs it
   * when it starts and when it reaches a record, as the driver's walk in micro-batches does: it goes on across batches
   * while the reader stays on its executor ([[WarmShards]]).
   */
  private def noteWalk(empty: Boolean): Unit =
    if (empty && millisBehind > 0) {
      walkedPages += 1
      if (walkedPages == ShardFeed.WalkLoggedAfter || walkedPages % ShardFeed.WalkLoggedEvery == 0) {
        log.info(s"Shard $ref: Kinesis answers empty pages from ${shard.start} while MillisBehindLatest " +
          s"($millisBehind ms) says records lie ahead; $walkedPages walked so far, the reader walks on (across " +
          "batches, while its executor keeps it).")
      }
    } else {
      if (walkedPages >= ShardFeed.WalkLoggedAfter) {
        log.info(s"Shard $ref: walked $walkedPages empty page(s) from ${shard.start} to " +
          (if (empty) "the tip." else "its first record after them."))
      }
      walkedPages = 0
    }

  /**
   * The reader to park once the feed's thread has stopped: its pages, the records it fetched but did not emit, its walk
   * and its shard's record size; None if it failed, ended, or still runs.
   */
  def unsent: Option[(ShardPages, Vector[FeedItem.Record], Long, RecordSize)] =
    if (stoppedByTask && !pages.isEnded) Some((pages, toEmit, walkedPages, recordSize)) else None

  /**
   * Where the task stands in this shard at `handed`, and what the feed saw, as the batch's end record of the shard:
   * records lie ahead of `handed` when the shard's tip does, or when records fetched were not all handed over.
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
      moreAvailable = millisBehind > 0 || toEmit.nonEmpty ||
        (handed != ShardPosition.ShardEnd && lastFed.exists(seq => handed != ShardPosition.AfterSequenceNumber(seq))),
      boundReached = false,
      lastArrivalMs,
      bytesRead,
      pages.getRecordsCalls - callsBefore,
      pages.throttledCalls - throttledBefore)))

  /** Hands the pages back: a subscription is cancelled, since rows fed may not all have been handed over. */
  def close(): Unit = pages.close(handedOver = false)
}

private[realtime] object ShardFeed {

  /** Longest wait for a subscription's next event at the tip before the feed looks again. */
  val AwaitMs = 1000L

  /** Empty pages with records ahead after which a walk is logged, and how often again while it lasts. */
  val WalkLoggedAfter = 100L
  val WalkLoggedEvery = 5000L
}
