package io.github.sparkkinesis.it

import scala.concurrent.duration._
import scala.util.control.NonFatal

/** Bounded polling: the only way these tests wait for something to happen. */
object Eventually {

  /** How often a condition is checked unless the caller says otherwise (say, for a condition that runs a Spark job). */
  val DefaultInterval: FiniteDuration = 50.millis

  /** Thrown from a condition to stop waiting at once: what is awaited can no longer happen. */
  final class GaveUp(message: String, cause: Throwable) extends AssertionError(message, cause)

  def giveUp(message: String, cause: Throwable = null): Nothing = throw new GaveUp(message, cause)

  /**
   * Polls `condition` until it holds, failing after `timeout` with a message naming `what`, the last exception the
   * condition threw (if any) and `detail`, which should describe what was seen instead.
   */
  def await(what: String, timeout: FiniteDuration, detail: => String = "", every: FiniteDuration = DefaultInterval)(
      condition: => Boolean): Unit = {
    awaitValue(what, timeout, detail, every)(if (condition) Some(()) else None)
  }

  /** Polls `probe` until it returns a value, which it returns; fails as [[await]] does. */
  def awaitValue[T](
      what: String,
      timeout: FiniteDuration,
      detail: => String = "",
      every: FiniteDuration = DefaultInterval)(
      probe: => Option[T]): T = {
    val deadline = timeout.fromNow
    var lastError: Throwable = null
    var result: Option[T] = None
    var timedOut = false
    while (result.isEmpty && !timedOut) {
      result =
        try probe
        catch {
          case e: GaveUp => throw e
          case NonFatal(e) =>
            lastError = e
            None
        }
      if (result.isEmpty) {
        if (deadline.isOverdue()) timedOut = true else Thread.sleep(every.toMillis)
      }
    }
    result.getOrElse {
      val seen =
        try Option(detail).filter(_.nonEmpty).map(d => s"; $d").getOrElse("")
        catch {
          case NonFatal(e) => s"; (could not describe what was seen: $e)"
        }
      val error = Option(lastError).map(e => s"; last error: $e").getOrElse("")
      throw new AssertionError(s"Timed out after $timeout waiting for $what$seen$error", lastError)
    }
  }
}
