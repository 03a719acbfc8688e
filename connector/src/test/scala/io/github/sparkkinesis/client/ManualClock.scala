package io.github.sparkkinesis.client

import java.util.concurrent.atomic.AtomicLong

/** Epoch-millisecond time that moves only when a test says so. */
final class ManualClock(startMillis: Long = 1700000000000L) extends (() => Long) {
  private val millis = new AtomicLong(startMillis)

  override def apply(): Long = millis.get()

  def advance(deltaMillis: Long): Unit = {
    require(deltaMillis >= 0, s"a clock does not run backwards (asked to advance by $deltaMillis ms)")
    millis.addAndGet(deltaMillis)
  }

  /**
   * A reader's sleep in simulated time: the clock reaches at least `deltaMillis` from now. Threads that sleep side by
   * side share their wait, as they would in real time, rather than adding their waits up.
   */
  def sleep(deltaMillis: Long): Unit = {
    val until = millis.get() + math.max(0L, deltaMillis)
    millis.accumulateAndGet(until, (now, wake) => math.max(now, wake))
  }
}
