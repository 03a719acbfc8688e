package io.github.sparkkinesis.client

/**
 * One shard of a [[LimitedKinesis]] stream: a backlog of `records` copies of `data` (stored once: the records differ in
 * sequence number and arrival time only), and AWS's per-shard GetRecords limits kept in real time. Thread-safe.
 *
 * The read rate is a debt: a page of B bytes served at time t makes the shard busy until max(busy, t) + B / rate, and a
 * call while busy is throttled; a call is also throttled when the shard has served `callsPerSecond` calls within the
 * last second. Throttled calls cost nothing (AWS does not say they count).
 */
final class LimitedShard(
    val index: Int,
    val id: String,
    range: HashKeyRange,
    val records: Int,
    data: Array[Byte],
    limits: AwsLimits) {
  import LimitedShard._

  /** Where the shard's sequence numbers start: 56 digits, "49", the shard's index in 6 digits, then the position. */
  private val prefix = "49" + f"$index%06d" + "0" * (SequenceDigits - 8 - PositionDigits)
  val startingSequenceNumber: String = sequenceNumber(-1)

  /** The backlog was written an hour ago, a millisecond per thousand records. */
  private val writtenAt = System.currentTimeMillis() - 3600 * 1000L

  private val recentCalls = Array.fill(limits.callsPerSecond)(Long.MinValue / 2) // guarded by this
  private var nextCall = 0 // guarded by this
  private var busyUntil = Long.MinValue / 2 // guarded by this
  private var servedCalls = 0L // guarded by this
  private var throttledCalls = 0L // guarded by this
  private var largeThrottles = 0L // guarded by this

  def recordBytes: Int = data.length

  /** The sequence number of the record at `position` (0-based); -1 gives the one before the first. */
  def sequenceNumber(position: Int): String = {
    val digits = (position + 1L).toString
    prefix + Zeros.substring(0, PositionDigits - digits.length) + digits
  }

  /** The position of the record with `sequenceNumber`. */
  def positionOf(sequenceNumber: String): Int = sequenceNumber.takeRight(PositionDigits).toInt - 1

  def arrivalOf(position: Int): Long = writtenAt + position / 1000

  /**
   * Whether a GetRecords call at `now` may go ahead; false counts it as throttled, and as forced by a large page when
   * the read-rate debt of a page over the per-second rate refused it.
   */
  def admit(now: Long): Boolean = synchronized {
    if (now < busyUntil || now - recentCalls(nextCall) < 1000L) {
      throttledCalls += 1
      if (now < busyUntil) largeThrottles += 1
      false
    } else {
      recentCalls(nextCall) = now
      nextCall = (nextCall + 1) % recentCalls.length
      servedCalls += 1
      true
    }
  }

  /** Charges a page of `bytes` served at `now` against the read rate. */
  def charge(now: Long, bytes: Long): Unit = synchronized {
    busyUntil = math.max(busyUntil, now) + bytes * 1000L / limits.readBytesPerSecond
  }

  /** The records in [from, from + count). */
  def slice(from: Int, count: Int): Vector[KinesisRecord] = {
    val out = Vector.newBuilder[KinesisRecord]
    out.sizeHint(count)
    var p = from
    while (p < from + count) {
      out += KinesisRecord(data, PartitionKey, sequenceNumber(p), arrivalOf(p))
      p += 1
    }
    out.result()
  }

  /** How many records from `from` one answer of at most `maxRecords` and `maxBytes` holds (at least one). */
  def pageLength(from: Int, maxRecords: Int, maxBytes: Long): Int =
    math.max(1, math.min(math.min(maxRecords, records - from).toLong, maxBytes / data.length).toInt)
      .min(records - from)

  def calls: (Long, Long, Long) = synchronized((servedCalls, throttledCalls, largeThrottles))

  def describe: ShardDescription =
    ShardDescription(id, None, None, range, startingSequenceNumber, None)
}

object LimitedShard {
  private val SequenceDigits = 56
  private val PositionDigits = 12
  private val Zeros = "0" * PositionDigits
  val PartitionKey = "pk"
}
