package io.github.sparkkinesis.source.planning

import scala.collection.mutable

import io.github.sparkkinesis.client.ShardDescription

/**
 * What one Trigger.AvailableNow run reads, fixed when it starts: shards that were closed then are read to their end
 * (their children included, as they become readable); every other shard up to the records that arrived before
 * `arrivedBeforeMs`. Records that arrive later belong to the next run. The bound is the driver's clock against Kinesis'
 * arrival times: with clocks apart by some seconds, the records of those seconds go to this run or the next, never to
 * none or both. Tracks which shards have reached the target.
 */
private[source] final class AvailableNowTarget(val arrivedBeforeMs: Long, closedAtStart: Set[String]) {
  private val reachedShards = mutable.Set.empty[String]

  /** The arrival bound for `shardId`; None for a shard closed when the run began, which is read to its end. */
  def arrivedBefore(shardId: String): Option[Long] =
    if (closedAtStart(shardId)) None else Some(arrivedBeforeMs)

  def reached(shardId: String): Boolean = reachedShards(shardId)

  /** `shardIds` were checked after the run began and had nothing before the bound. */
  def reach(shardIds: Iterable[String]): Unit = reachedShards ++= shardIds
}

private[source] object AvailableNowTarget {

  /** The target of a run that begins at `nowMs`: records that arrived up to and including that millisecond. */
  def fixedAt(nowMs: Long, listing: Seq[ShardDescription]): AvailableNowTarget =
    new AvailableNowTarget(nowMs + 1, listing.filter(_.isClosed).map(_.shardId).toSet)
}
