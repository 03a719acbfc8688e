package io.github.sparkkinesis.source.reading

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException,
  Backoff,
  ExpiredIteratorException,
  KinesisClient,
  KinesisClientException,
  KinesisRecord,
  RecordBatch,
  ResourceMissingException,
  ThrottledException,
  TimestampInFutureException
}
import io.github.sparkkinesis.metrics.ReadMetrics
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.planning.FailureWindow

/**
 * One shard's records from GetRecords calls (polling), as pages for a [[ShardReader]]: one call per page, forward from
 * `start`. It hides the iterator: it gets one lazily, renews it from the last record read when it expires, paces calls
 * at least `fetchIntervalMs` apart, and waits out throttling with jittered back-off. Calls that fail for a passing
 * reason (a refused or reset connection, a server error: an emulator restarting, a network outage) are retried with the
 * same back-off for at most `failureTimeoutMs` in a row (option `kinesis.driverRetryTimeout`); refused credentials and
 * a missing stream or shard fail at once. It never compares a timestamp with the local clock: an AT_TIMESTAMP position
 * that Kinesis finds in its future reads as an empty page at the tip. A call also waits until the last page's bytes
 * have taken their time at `maxBytesPerSecond` (`kinesis.getRecords.maxBytesPerSecondPerShard`; by default the shard's
 * own read limit, [[PollingPages.ShardReadRate]]) since the answer that brought them ([[PollingPages.pacingMs]]): from
 * the start of any call on, these pages read at most the rate's bytes per elapsed second, plus the page that call
 * returns. At the shard's limit that is when Kinesis serves the next call: after a page of B bytes it throttles every
 * call for B / 2 MiB/s (a 10-MiB page: 5 s), and waiting spares those throttled calls and their back-off's overshoot.
 * The wait counts from the answer (its headers, where the client tells: [[RecordBatch.msAfterAnswer]]), not from the
 * call: Kinesis charges the page at some moment in between, and a call timed from the request would come that moment
 * too early and be throttled. Nor from the call's end: a large page's transfer and parsing took time Kinesis counted.
 * Given `startIterator`, an iterator that starts exactly at `start` (the driver's check's), it reads from that one
 * first instead of calling GetShardIterator.
 */
private[sparkkinesis] final class PollingPages(
    client: KinesisClient,
    stream: String,
    shardId: String,
    start: ShardPosition,
    recordsPerFetch: Int,
    fetchIntervalMs: Long,
    backoff: Backoff,
    failureTimeoutMs: Long,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep,
    override val metrics: ReadMetrics = ReadMetrics.detached,
    maxBytesPerSecond: Option[Long] = None,
    startIterator: Option[String] = None) extends ShardPages {

  private val log = LoggerFactory.getLogger(getClass)
  private val failures = new FailureWindow(s"Reading shard $shardId of stream $stream", failureTimeoutMs, clock)

  /** The driver's check's iterator first, if given; renewed from [[position]] when it expires or a call fails. */
  private var iterator: Option[String] = startIterator
  private var lastSequenceNumber: Option[String] = None
  private var lastCallAtMs = Long.MinValue / 2

  /** When the rate cap lets the next call start. */
  private var pacedUntilMs = Long.MinValue / 2
  private var ended = start == ShardPosition.ShardEnd
  private var calls = 0L
  private var throttled = 0L

  override def getRecordsCalls: Long = calls

  override def throttledCalls: Long = throttled

  /** Only a cap the user set holds the shard's next task back; the shard's own limit paces within a task. */
  override def msUntilPaced: Long = if (maxBytesPerSecond.isEmpty) 0L else math.max(0L, pacedUntilMs - clock())

  /** A cap's pacing was the driver's to wait for; the shard's own limit's is not, and goes on. */
  override def takenOver(): Unit = if (maxBytesPerSecond.isDefined) pacedUntilMs = Long.MinValue / 2

  override def position: ShardPosition =
    if (ended) ShardPosition.ShardEnd
    else lastSequenceNumber.map(ShardPosition.AfterSequenceNumber).getOrElse(start)

  override def isEnded: Boolean = ended

  /**
   * One GetRecords call of at most `limit` records (after pacing); None when throttling or passing failures lasted
   * until `deadlineMs`, or the rate cap allows no call before it. Must not be called once [[isEnded]].
   */
  override def fetch(deadlineMs: Long, limit: Int): Option[RecordBatch] = {
    require(!ended, s"shard $shardId of stream $stream was already read to its end")
    var expiredInARow = 0
    while (true) {
      if (pacedUntilMs > deadlineMs) return None
      awaitNextCall(deadlineMs)
      lastCallAtMs = clock()
      try {
        val it = currentIterator() match {
          case Some(it) => it
          case None => return Some(RecordBatch(Nil, None, 0L)) // not yet: see TimestampInFutureException
        }
        calls += 1
        metrics.getRecordsCalls.inc()
        val batch = client.getRecords(stream, it, math.max(1, math.min(limit, recordsPerFetch)))
        // Only a page with bytes paces: empty pages go on being read whatever the deadline (a walk to the records).
        val pacing = PollingPages.pacingMs(batch.records, PollingPages.readRate(maxBytesPerSecond))
        pacedUntilMs = if (pacing > 0) clock() + math.max(0L, pacing - batch.msAfterAnswer) else Long.MinValue / 2
        backoff.reset()
        failures.succeeded()
        if (batch.records.nonEmpty) lastSequenceNumber = Some(batch.records.last.sequenceNumber)
        iterator = batch.nextIterator
        if (batch.nextIterator.isEmpty) ended = true
        if (batch.records.isEmpty && batch.millisBehindLatest > 0) metrics.emptyPages.inc()
        return Some(batch)
      } catch {
        case e: ExpiredIteratorException =>
          iterator = None
          expiredInARow += 1
          if (expiredInARow > 3) throw e
          metrics.retries.inc()
        case _: ThrottledException =>
          throttled += 1
          metrics.throttledCalls.inc()
          if (!backOff(deadlineMs)) return None
        case e @ (_: AccessException | _: ResourceMissingException) => throw e
        case e: KinesisClientException =>
          iterator = None // it may be what failed; a new one starts from the last record read
          failures.failed(e) // throws once failures have lasted failureTimeoutMs
          metrics.retries.inc()
          log.warn(s"Reading shard $shardId of stream $stream failed; trying again: ${e.getMessage}")
          if (!backOff(deadlineMs)) return None
      }
    }
    None
  }

  /**
   * Waits out the fetch interval since the last call and the last page's pacing, unless pacing runs past `deadlineMs`.
   */
  override def awaitNextCall(deadlineMs: Long): Boolean = {
    val wait = math.max(lastCallAtMs + fetchIntervalMs, pacedUntilMs) - clock()
    if (wait > 0 && pacedUntilMs <= deadlineMs) sleep(wait)
    true
  }

  /**
   * Goes back to `to`, a position these pages have held (`start`, or just after a record it returned): the caller keeps
   * only the records up to there, and the next fetch reads on from there.
   */
  override def rewind(to: ShardPosition): Unit = {
    lastSequenceNumber = to match {
      case ShardPosition.AfterSequenceNumber(seq) if to != start => Some(seq)
      case _ if to == start => None
      case other => throw new IllegalArgumentException(s"cannot rewind shard $shardId of stream $stream to $other")
    }
    iterator = None
    ended = false
  }

  /** Waits the next back-off delay; false, without waiting, when that would pass `deadlineMs`. */
  private def backOff(deadlineMs: Long): Boolean = {
    val delay = backoff.nextDelayMs()
    if (clock() + delay >= deadlineMs) false
    else {
      sleep(delay)
      true
    }
  }

  private def currentIterator(): Option[String] = iterator.orElse {
    val from = position.iteratorStart.getOrElse(
      throw new IllegalStateException(s"no iterator can start at the end of shard $shardId"))
    try {
      iterator = Some(client.shardIterator(stream, shardId, from))
      iterator
    } catch {
      case _: TimestampInFutureException => None
    }
  }
}

private[sparkkinesis] object PollingPages {

  /** A shard's read limit, 2 MiB/s, which every polling consumer of it shares (Kinesis' quotas page). */
  val ShardReadRate: Long = 2L << 20

  /** The rate a polling reader paces its calls by: the user's cap per shard, else the shard's read limit. */
  def readRate(cap: Option[Long]): Long = cap.getOrElse(ShardReadRate)

  /** How long a page of `records` holds the next call back at `bytesPerSecond`: their data's bytes at that rate. */
  def pacingMs(records: Seq[KinesisRecord], bytesPerSecond: Long): Long = {
    val bytes = records.foldLeft(0L)(_ + _.data.length)
    (bytes * 1000 + bytesPerSecond - 1) / bytesPerSecond
  }
}
