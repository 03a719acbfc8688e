package io.github.sparkkinesis.source.planning

import io.github.sparkkinesis.client.ShardDescription
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState, StartingPosition}

/** Pure rules for which shards the source tracks and where each starts; no I/O, so fully unit-tested. */
private[sparkkinesis] object TrackedShards {

  /** The shards of a new query and where each starts, with LATEST resolved to `nowMs`. */
  def initial(
      stream: String,
      start: StartingPosition,
      listing: Seq[ShardDescription],
      nowMs: Long): Map[String, ShardState] = {
    val listed = listing.map(_.shardId).toSet
    def waits(d: ShardDescription): Seq[String] = d.parents.filter(listed)
    def openAtNow(d: ShardDescription): ShardPosition =
      if (d.isClosed) ShardPosition.ShardEnd else ShardPosition.AtTimestamp(nowMs)

    val positions: Map[String, ShardPosition] = start match {
      case StartingPosition.Latest => listing.map(d => d.shardId -> openAtNow(d)).toMap
      case StartingPosition.TrimHorizon => listing.map(_.shardId -> ShardPosition.TrimHorizon).toMap
      case StartingPosition.AtTimestamp(ms) => listing.map(_.shardId -> ShardPosition.AtTimestamp(ms)).toMap
      case StartingPosition.PerShard(named) =>
        val unknown = named.keySet.diff(listed)
        if (unknown.nonEmpty) {
          throw new IllegalArgumentException(
            s"Option kinesis.startingPosition names shard(s) ${unknown.toSeq.sorted.mkString(", ")} that stream " +
              s"$stream does not have (or no longer retains). Its shards are: ${listed.toSeq.sorted.mkString(", ")}.")
        }
        val skipped = ancestors(named.keySet, listing)
        listing.map { d =>
          d.shardId -> (named.get(d.shardId) match {
            case Some(Some(position)) => position
            case Some(None) => openAtNow(d)
            case None if skipped(d.shardId) => ShardPosition.ShardEnd
            case None => ShardPosition.TrimHorizon
          })
        }.toMap
    }
    listing.map(d => d.shardId -> ShardState(positions(d.shardId), waits(d))).toMap
  }

  /** Every ancestor of `shards` that `listing` still describes. */
  private def ancestors(shards: Set[String], listing: Seq[ShardDescription]): Set[String] = {
    val byId = listing.map(d => d.shardId -> d).toMap
    var found = Set.empty[String]
    var frontier = shards.toSeq.flatMap(id => byId.get(id).toSeq.flatMap(_.parents))
    while (frontier.nonEmpty) {
      val fresh = frontier.filter(id => byId.contains(id) && !found(id))
      found ++= fresh
      frontier = fresh.flatMap(id => byId(id).parents)
    }
    found
  }

  /** The outcome of [[reconcile]]: the shards to track from now on, and tracked shards lost unread. */
  final case class Reconciled(shards: Map[String, ShardState], lost: Seq[String])

  /**
   * Brings the tracked shards in line with a fresh listing: new shards (children of a reshard) start at TRIM_HORIZON
   * after every parent that still exists, tracked before or new in this listing (a split and then a merge while the
   * query was stopped gives a child whose parent is itself new); finished shards leave once their children are tracked,
   * so the offset stays small, and are not taken for new ones while still listed; unfinished shards that are no longer
   * listed are reported as lost (their unread records expired or were deleted).
   */
  def reconcile(tracked: Map[String, ShardState], listing: Seq[ShardDescription]): Reconciled = {
    val listed = listing.map(_.shardId).toSet
    val (kept, gone) = tracked.partition { case (id, _) => listed(id) }
    val lost = gone.collect { case (id, state) if !state.isFinished => id }.toSeq.sorted
    val readBefore = ancestors(kept.keySet, listing)
    val added = listing.filterNot(d => kept.contains(d.shardId) || readBefore(d.shardId)).map { d =>
      d.shardId -> ShardState(ShardPosition.TrimHorizon, d.parents.filter(listed))
    }
    val tidied = kept.map { case (id, state) => id -> state.copy(waitsFor = state.waitsFor.filter(listed)) }
    val all = tidied ++ added
    val children = listing.flatMap(d => d.parents.map(_ -> d.shardId)).groupBy(_._1)
    val done = all.collect {
      case (id, state)
          if state.isFinished &&
            children.get(id).exists(_.forall { case (_, child) => all.contains(child) }) => id
    }
    Reconciled(all -- done, lost)
  }
}
