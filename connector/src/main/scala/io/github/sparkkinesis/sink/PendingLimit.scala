package io.github.sparkkinesis.sink

/**
 * A cap on the records and bytes handed to a producer and not yet confirmed, taken by [[tryAcquire]] and given back by
 * [[release]] from any thread. A record always fits while nothing is pending, so a row larger than the byte cap still
 * goes through, alone.
 */
private[sink] final class PendingLimit(val maxRecords: Int, val maxBytes: Long) {
  private var records = 0 // guarded by this
  private var bytes = 0L // guarded by this

  /** Takes room for one record of `size` bytes, waiting at most `waitMs` for it; false if none was freed in time. */
  def tryAcquire(size: Long, waitMs: Long): Boolean = synchronized {
    var left = KinesisDataWriter.nanos(waitMs)
    val deadline = System.nanoTime() + left
    while (!fits(size) && left > 0) {
      wait(math.max(1L, left / 1000000L))
      left = deadline - System.nanoTime()
    }
    val taken = fits(size)
    if (taken) {
      records += 1
      bytes += size
    }
    taken
  }

  def release(size: Long): Unit = synchronized {
    records -= 1
    bytes -= size
    notifyAll()
  }

  /** The records and bytes pending now. */
  def pending: (Int, Long) = synchronized((records, bytes))

  private def fits(size: Long): Boolean = records == 0 || (records < maxRecords && bytes + size <= maxBytes)
}
