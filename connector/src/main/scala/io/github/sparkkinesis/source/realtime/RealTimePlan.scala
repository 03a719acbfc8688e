package io.github.sparkkinesis.source.realtime

import io.github.sparkkinesis.client.HashKeyRange
import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardPosition, ShardState}
import io.github.sparkkinesis.source.reading.TaskShard

/**
 * One real-time batch as the driver planned it: batch number `batch`, the shards tracked per stream when it started,
 * and its tasks. Pure, so the planning and the merging of the tasks' positions are unit-tested without Spark.
 */
final case class RealTimePlan(
    batch: Long,
    tracked: Map[String, Map[String, ShardState]],
    partitions: Seq[RealTimePartition]) {

  /**
   * The batch's end offset from what its tasks report: every shard a task read moves to where it handed its last row
   * over (its end, for a shard read to its end), a child shard a task found is tracked with its parents, and every
   * other shard stays where the batch found it. The offset plans no reads (`reads` is empty): its positions are final,
   * so the next batch, real-time or micro-batch, starts there without reading the metadata store.
   */
  def endOffset(reports: Seq[RealTimeTaskOffset]): KinesisSourceOffset = {
    val ends = reports.flatMap(_.ends)
    val children = reports.flatMap(_.children).toMap
    val streams = tracked.map { case (stream, shards) =>
      val moved = ends.filter(_.stream == stream).map { e =>
        val waitsFor = children.getOrElse(ShardRef(stream, e.shardId), Nil)
        e.shardId -> shards.get(e.shardId).fold(ShardState(e.end, waitsFor))(_.copy(position = e.end))
      }
      stream -> (shards ++ moved)
    }
    KinesisSourceOffset(batch, streams, reads = Some(Map.empty))
  }

  /** The shard-end records of `reports`, by stream, for the batch's progress metrics. */
  def endsByStream(reports: Seq[RealTimeTaskOffset]): Map[String, Seq[ShardEndRecord]] =
    reports.flatMap(_.ends).groupBy(_.stream)
}

object RealTimePlan {

  /**
   * Plans real-time batch `batch` over the `tracked` shards: every readable shard (unfinished, its parents finished) is
   * read by one of the tasks, dealt round-robin in (stream, shard) order. Every task of a real-time batch runs for the
   * whole batch at once, beside the batch's shuffle stages, so `tasks` counts them from the slots those leave
   * ([[RealTimeTasks]]; a task may then read more than `kinesis.shardsPerTask` shards). `ranges` gives the hash key
   * ranges of a stream's shards when misrouted sub-records are dropped, `closed` the shards the driver's listing shows
   * closed. Task `t` prefers executor `t` of `executors` (modulo their number): while the shards and executors stay the
   * same, a shard's task runs where the last one parked its reader ([[WarmShards]]).
   */
  def apply(
      batch: Long,
      tracked: Map[String, Map[String, ShardState]],
      tasks: RealTimeTasks,
      ranges: (String, Seq[String]) => Map[String, HashKeyRange],
      closed: String => Set[String],
      executors: IndexedSeq[String] = IndexedSeq.empty): RealTimePlan = {
    val readable = tracked.toSeq.sortBy(_._1).flatMap { case (s, shards) => ShardState.readable(shards).map(s -> _) }
    val taskCount = tasks.count(readable.size)
    val taskOf = readable.zipWithIndex.map { case (shard, i) => shard -> i % taskCount }.toMap
    val lineage = RealTimeLineage(
      taskOf.map { case ((s, id), t) => ShardRef(s, id) -> t },
      tracked.toSeq.flatMap { case (s, shards) => shards.collect { case (id, st) if st.isFinished => ShardRef(s, id) } }
        .toSet)
    val rangesByStream = readable.groupBy(_._1).map { case (s, shards) => s -> ranges(s, shards.map(_._2)) }
    val closedByStream = readable.map(_._1).distinct.map(s => s -> closed(s)).toMap
    val partitions = readable.groupBy(taskOf).toSeq.sortBy(_._1).map { case (task, shards) =>
      RealTimePartition(
        batch,
        task,
        shards.map { case (s, id) =>
          TaskShard(
            s,
            id,
            batch,
            tracked(s)(id).position,
            rangesByStream(s).get(id),
            listedClosed = closedByStream(s)(id))
        },
        lineage,
        locations = if (executors.isEmpty) Nil else Seq(executors(task % executors.size)))
    }
    RealTimePlan(batch, tracked, partitions)
  }

  /** Where a shard starts that a real-time task found while its batch ran: its first retained record. */
  val ChildStart: ShardPosition = ShardPosition.TrimHorizon
}
