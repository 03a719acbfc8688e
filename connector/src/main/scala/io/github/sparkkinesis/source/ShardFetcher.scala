package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.{ExpiredIteratorException, KinesisClient, RecordBatch, ThrottledException}
import io.github.sparkkinesis.offsets.ShardPosition

/**
 * Reads one shard forward from `start`, one GetRecords call at a time. It hides the iterator: it gets one
 * lazily, renews it from the last record read when it expires, paces calls at least `fetchIntervalMs`
 * apart, and waits out throttling with jittered back-off.
 */
private[sparkkinesis] final class ShardFetcher(
    client: KinesisClient,
    stream: String,
    shardId: String,
    start: ShardPosition,
    recordsPerFetch: Int,
    fetchIntervalMs: Long,
    backoff: Backoff,
    clock: () => Long = () => System.currentTimeMillis()) {

  private var iterator: Option[String] = None
  private var lastSequenceNumber: Option[String] = None
  private var lastCallAtMs = Long.MinValue / 2
  private var ended = start == ShardPosition.ShardEnd

  /** Where reading would go on: just after the last record returned so far, or `start`. */
  def position: ShardPosition =
    if (ended) ShardPosition.ShardEnd
    else lastSequenceNumber.map(ShardPosition.AfterSequenceNumber).getOrElse(start)

  /** Whether the shard is closed and read to its end: nothing more will ever come. */
  def isEnded: Boolean = ended

  /**
   * One GetRecords call (after pacing); None when throttling lasted until `deadlineMs`. Must not be called
   * once [[isEnded]].
   */
  def fetch(deadlineMs: Long): Option[RecordBatch] = {
    require(!ended, s"shard $shardId of stream $stream was already read to its end")
    if (ShardFetcher.startsInFuture(position, clock())) return Some(RecordBatch(Nil, None, 0L))
    var expiredInARow = 0
    while (true) {
      val wait = lastCallAtMs + fetchIntervalMs - clock()
      if (wait > 0) Thread.sleep(wait)
      lastCallAtMs = clock()
      try {
        val batch = client.getRecords(stream, currentIterator(), recordsPerFetch)
        backoff.reset()
        if (batch.records.nonEmpty) lastSequenceNumber = Some(batch.records.last.sequenceNumber)
        iterator = batch.nextIterator
        if (batch.nextIterator.isEmpty) ended = true
        return Some(batch)
      } catch {
        case e: ExpiredIteratorException =>
          iterator = None
          expiredInARow += 1
          if (expiredInARow > 3) throw e
        case _: ThrottledException =>
          val delay = backoff.nextDelayMs()
          if (clock() + delay >= deadlineMs) return None
          Thread.sleep(delay)
      }
    }
    None
  }

  private def currentIterator(): String = iterator.getOrElse {
    val from = position.iteratorStart.getOrElse(
      throw new IllegalStateException(s"no iterator can start at the end of shard $shardId"))
    val fresh = client.shardIterator(stream, shardId, from)
    iterator = Some(fresh)
    fresh
  }
}

private[sparkkinesis] object ShardFetcher {

  /** No record can have arrived at or after a future instant yet (and Kinesis refuses such iterators). */
  def startsInFuture(position: ShardPosition, nowMs: Long): Boolean = position match {
    case ShardPosition.AtTimestamp(ms) => ms > nowMs
    case _                             => false
  }
}
