package io.github.sparkkinesis.sink

import java.util.ArrayDeque

/**
 * One stream's records in a lane of a [[PutRecordsProducer]], oldest first (records sent again go back in front), and
 * when its next request is due. Not thread-safe: its lane guards it.
 */
private[sink] final class PutRecordsQueue(maxBufferedMs: Long) {
  import PutRecordsQueue._

  private val records = new ArrayDeque[Queued]()
  private var bytes = 0L

  def size: Int = records.size

  def add(q: Queued, first: Boolean): Unit = {
    if (first) records.addFirst(q) else records.addLast(q)
    bytes += q.record.size
  }

  /** Whether a whole request is queued. */
  def full: Boolean = records.size >= MaxEntries || bytes >= MaxRequestBytes

  /** When the head record was handed over: the queue waiting longest goes first. */
  def oldestHandedOverAt: Long = records.peekFirst().handedOverAt

  /**
   * When the next request may go: once the head may be sent, and either a whole request is queued, the head is sent
   * again, or it has waited `maxBufferedMs` for more.
   */
  def dueAt: Long = {
    val head = records.peekFirst()
    if (full || head.attempts > 0) head.notBefore else math.max(head.notBefore, head.handedOverAt + maxBufferedMs)
  }

  /** The next request's records, from the head: those that may be sent at `now`, within one request's limits. */
  def take(now: Long): Vector[Queued] = {
    val out = Vector.newBuilder[Queued]
    var (n, size) = (0, 0L)
    while (!records.isEmpty && n < MaxEntries && records.peekFirst().notBefore <= now &&
      (n == 0 || size + records.peekFirst().record.size <= MaxRequestBytes)) {
      val q = records.pollFirst()
      bytes -= q.record.size
      size += q.record.size
      n += 1
      out += q
    }
    out.result()
  }

  /** Every record, taken out. */
  def drain(): Vector[Queued] = {
    val all = Vector.newBuilder[Queued]
    while (!records.isEmpty) all += records.pollFirst()
    bytes = 0L
    all.result()
  }
}

private[sink] object PutRecordsQueue {

  /** Most records of one PutRecords call (AWS's limit). */
  val MaxEntries = 500

  /** Most bytes, partition keys and data, of one PutRecords call (AWS's limit: 5 MiB). */
  val MaxRequestBytes: Long = 5L * 1024 * 1024

  /**
   * A record handed over and not yet written or failed: when (the producer's clock) and until when, the attempts made,
   * when it may be sent again and the last error. Changed by its lane's thread only.
   */
  final class Queued(
      val record: OutgoingRecord,
      val onDone: SendResult => Unit,
      val handedOverAt: Long,
      val deadline: Long) {
    var attempts = 0
    var notBefore: Long = Long.MinValue
    var lastError = ""

    /** Whether its `onDone` was called. */
    var finished = false
  }
}
