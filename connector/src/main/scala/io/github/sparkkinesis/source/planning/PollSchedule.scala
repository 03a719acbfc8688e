package io.github.sparkkinesis.source.planning

import scala.collection.mutable

/**
 * When the driver may next look at each shard, so that the query stays inside its GetRecords budget of at most two
 * calls per second per shard with default options (one when idle). A look is either a check (one call with limit 1)
 * or a read planned straight away (a task's calls): a shard whose last read showed more records coming waits
 * `fetchIntervalMs` after the batch that read it ended and is then read without a check; any other shard is checked
 * at most once per `idleIntervalMs`, counted from the batch that read it or the check that found nothing. Only
 * durations of the driver's own clock are compared.
 */
private[source] final class PollSchedule(fetchIntervalMs: Long, idleIntervalMs: Long, clock: () => Long) {
  private val notBefore = mutable.Map.empty[String, Long]

  def isDue(shardId: String): Boolean = notBefore.get(shardId).forall(_ <= clock())

  /** How long until every one of `shardIds` is due (0 when they are). */
  def msUntilDue(shardIds: Iterable[String]): Long =
    shardIds.flatMap(notBefore.get).foldLeft(0L)((wait, at) => math.max(wait, at - clock()))

  /** At most `limit` of `shardIds`, those due longest first (never looked at counts as longest). */
  def mostOverdue(shardIds: Seq[String], limit: Int): Seq[String] =
    if (shardIds.size <= limit) shardIds
    else shardIds.sortBy(id => notBefore.getOrElse(id, Long.MinValue)).take(limit)

  /** The batch that read `shardIds` has ended; the next look at each is due after `fetchIntervalMs`. */
  def readOn(shardIds: Iterable[String]): Unit = after(shardIds, fetchIntervalMs)

  /** A check found nothing new in `shardIds`, or the batch that read them ended and their next look is a check. */
  def idle(shardIds: Iterable[String]): Unit = after(shardIds, idleIntervalMs)

  /** Forgets shards no longer tracked, so the schedule does not grow with resharding. */
  def retain(tracked: String => Boolean): Unit = notBefore --= notBefore.keys.filterNot(tracked).toList

  private def after(shardIds: Iterable[String], delayMs: Long): Unit = {
    val at = clock() + delayMs
    shardIds.foreach(id => notBefore(id) = at)
  }
}
