package io.github.sparkkinesis.client

import java.util.concurrent.ThreadLocalRandom

/** Exponential back-off with full jitter: the n-th wait is uniform in [0, min(max, base * 2^n)]. */
private[sparkkinesis] final class Backoff(baseMs: Long, maxMs: Long) {
  private var attempt = 0

  def nextDelayMs(): Long = {
    val ceiling = math.min(maxMs, baseMs << math.min(attempt, 20))
    attempt += 1
    ThreadLocalRandom.current().nextLong(ceiling + 1)
  }

  def reset(): Unit = attempt = 0
}
