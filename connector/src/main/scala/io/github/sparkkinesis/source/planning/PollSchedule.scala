package io.github.sparkkinesis.source.planning

import scala.collection.mutable

/**
 * Each shard's planning state, and its only owner: when the driver may next look at the shard, and whether that look is
 * a check or, for an expected shard, a read planned straight away without a check; the state machine is stated on
 * [[StreamPlanner]], which drives it. The pacing keeps the query inside its GetRecords budget of at most two calls per
 * second per shard with default options (one when idle); only durations of the driver's own clock are compared.
 */
private[source] final class PollSchedule(fetchIntervalMs: Long, idleIntervalMs: Long, clock: () => Long) {
  import PollSchedule.Next

  private val next = mutable.Map.empty[String, Next]

  def isDue(shardId: String): Boolean = next.get(shardId).forall(_.atMs <= clock())

  /** Whether the next look at `shardId` reads it without a check. */
  def isExpected(shardId: String): Boolean = next.get(shardId).exists(_.expected)

  /** How long until every one of `shardIds` is due (0 when they are). */
  def msUntilDue(shardIds: Iterable[String]): Long = {
    val now = clock()
    shardIds.flatMap(next.get).foldLeft(0L)((wait, n) => if (n.atMs > now) math.max(wait, n.atMs - now) else wait)
  }

  /** At most `limit` of `shardIds`, those due longest first (never looked at counts as longest). */
  def mostOverdue(shardIds: Seq[String], limit: Int): Seq[String] =
    if (shardIds.size <= limit) shardIds
    else shardIds.sortBy(id => next.get(id).fold(Long.MinValue)(_.atMs)).take(limit)

  /**
   * The batch that read `read` has ended: those in `expected` are read again without a check `fetchIntervalMs` from
   * now; the others are checked next, `fetchIntervalMs` from now when `checkSoon`, else `idleIntervalMs`; and none
   * sooner than the read-rate cap held its next call back when its task stopped (`pacedMs`).
   */
  def batchEnded(
      read: Iterable[String],
      expected: String => Boolean,
      checkSoon: Boolean,
      pacedMs: String => Long = _ => 0L): Unit = {
    val at = clock()
    read.foreach { id =>
      val soon = expected(id) || checkSoon
      next(id) = Next(at + math.max(if (soon) fetchIntervalMs else idleIntervalMs, pacedMs(id)), expected(id))
    }
  }

  /** A run resumes after a batch an earlier run planned: `shardIds` are expected, due as they were. */
  def expect(shardIds: Iterable[String]): Unit =
    shardIds.foreach(id => next(id) = Next(next.get(id).fold(Long.MinValue)(_.atMs), expected = true))

  /** Checks of `shardIds` found nothing new, or went unanswered: the next look is due `idleIntervalMs` from now. */
  def checkedIdle(shardIds: Iterable[String]): Unit = checked(shardIds, idleIntervalMs)

  /** Checks of `shardIds` walked on through empty pages: the walk goes on `fetchIntervalMs` from now. */
  def checkedWalking(shardIds: Iterable[String]): Unit = checked(shardIds, fetchIntervalMs)

  /** Forgets shards no longer tracked, so the schedule does not grow with resharding. */
  def retain(tracked: String => Boolean): Unit = next --= next.keys.filterNot(tracked).toList

  private def checked(shardIds: Iterable[String], delayMs: Long): Unit = {
    val at = clock() + delayMs
    shardIds.foreach(id => next(id) = Next(at, next.get(id).exists(_.expected)))
  }
}

private[source] object PollSchedule {

  /** A shard's next look: due at `atMs` (Long.MinValue: at once), a read without a check when `expected`. */
  private final case class Next(atMs: Long, expected: Boolean)
}
