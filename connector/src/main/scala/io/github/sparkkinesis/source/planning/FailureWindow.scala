package io.github.sparkkinesis.source.planning

/**
 * How long something has kept failing, by `clock`: after `timeoutMs` of failures with no success in between, [[failed]]
 * throws, naming `what` and option `kinesis.driverRetryTimeout`, with the last error.
 */
private[source] final class FailureWindow(what: String, timeoutMs: Long, clock: () => Long) {
  private var failingSinceMs: Option[Long] = None

  def succeeded(): Unit = failingSinceMs = None

  def failed(e: Exception): Unit = {
    val since = failingSinceMs.getOrElse(clock())
    failingSinceMs = Some(since)
    if (clock() - since >= timeoutMs) {
      throw new IllegalStateException(
        s"$what has failed for ${clock() - since} ms (option kinesis.driverRetryTimeout): ${e.getMessage}",
        e)
    }
  }
}
