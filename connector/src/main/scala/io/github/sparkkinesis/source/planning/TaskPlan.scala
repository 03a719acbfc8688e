package io.github.sparkkinesis.source.planning

import io.github.sparkkinesis.client.HashKeyRange
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardPosition, ShardRead}
import io.github.sparkkinesis.source.reading.{Expired, TaskPartition, TaskShard}

/** How a micro-batch's shards are shared out among its tasks; pure, so unit-tested without Spark. */
private[source] object TaskPlan {

  /**
   * Tasks for a batch that reads `shards` shards: one per `shardsPerTask`, and at least one per core (`parallelism`)
   * while there are enough shards, so a small batch still uses the whole cluster.
   */
  def taskCount(shards: Int, shardsPerTask: Int, parallelism: Int): Int =
    if (shards == 0) 0 else math.max((shards + shardsPerTask - 1) / shardsPerTask, math.min(shards, parallelism))

  /**
   * Tasks for a batch whose shards are all read at once on `slots` task slots: as [[taskCount]], but never more than
   * the slots (a task then reads more than `shardsPerTask` shards), so no shard waits idle for a later wave of tasks.
   */
  def taskCountAtOnce(shards: Int, shardsPerTask: Int, slots: Int): Int =
    math.min(taskCount(shards, shardsPerTask, slots), math.max(1, slots))

  /**
   * How the next batch reads each (stream, shard) with news, in (stream, shard) order: its shares of the read limits
   * `maxRecords` and `maxBytes` (the shares of each add up to the limit, or to one record or byte per shard when the
   * batch reads more shards than that), its AvailableNow bound, and its task, dealt round-robin so each task gets
   * shards of every stream. With `executors` (more than one), a task reads only shards of one home executor ([[home]]),
   * and each home gets a share of the `tasks` in proportion to its shards, and at least one task per `shardsPerTask` of
   * them: a shard's task can then always run where its subscription is kept.
   */
  def reads(
      news: Seq[(String, String)],
      maxRecords: Option[Long],
      tasks: Int,
      arrivedBefore: (String, String) => Option[Long],
      executors: Int = 0,
      shardsPerTask: Int = Int.MaxValue,
      maxBytes: Option[Long] = None): Map[String, Map[String, ShardRead]] = {
    val task = taskOf(news.sorted, tasks, executors, shardsPerTask)
    def share(limit: Long, i: Int) = math.max(1L, limit / news.size + (if (i < limit % news.size) 1 else 0))
    news.sorted.zipWithIndex.map { case ((stream, id), i) =>
      val read = ShardRead(
        maxRecords.map(share(_, i)),
        arrivedBefore(stream, id),
        Some(task((stream, id))),
        maxBytes.map(share(_, i)))
      (stream, id, read)
    }.groupBy(_._1).map { case (stream, shards) => stream -> shards.map(s => s._2 -> s._3).toMap }
  }

  /** The executor, of `executors`, where a shard's reads prefer to run, whichever other shards a batch reads. */
  def home(stream: String, shardId: String, executors: Int): Int =
    Math.floorMod(s"$stream/$shardId".hashCode, executors)

  private def taskOf(
      sorted: Seq[(String, String)],
      tasks: Int,
      executors: Int,
      shardsPerTask: Int): Map[(String, String), Int] =
    if (executors <= 1) sorted.zipWithIndex.map { case (shard, i) => shard -> i % tasks }.toMap
    else {
      val byHome = sorted.groupBy { case (s, id) => home(s, id, executors) }.toSeq.sortBy(_._1).map(_._2)
      val shares = byHome.map { g =>
        val proportional = math.round(tasks.toDouble * g.size / sorted.size).toInt
        math.min(g.size, Seq(1, proportional, (g.size - 1) / shardsPerTask + 1).max)
      }
      byHome.zip(shares.scanLeft(0)(_ + _)).zip(shares).flatMap { case ((group, first), share) =>
        group.zipWithIndex.map { case (shard, i) => shard -> (first + i % share) }
      }.toMap
    }

  /**
   * The tasks of the batch ending at `offset`; `ranges` gives a stream's shards' hash key ranges when needed, `closed`
   * the shards the driver's listing of a stream shows closed, `iterators` an iterator that starts exactly where a
   * (stream, shard) starts in this batch, if the driver has one, `recordBytes` the average record of a (stream, shard)
   * as the driver last saw it, if it did. With `executors`, a task whose shards share a [[home]] prefers that executor.
   */
  def partitions(
      offset: KinesisSourceOffset,
      ranges: (String, Seq[String]) => Map[String, HashKeyRange],
      executors: IndexedSeq[String] = IndexedSeq.empty,
      expired: Map[(String, String), Expired] = Map.empty,
      closed: String => Set[String] = _ => Set.empty,
      iterators: (String, String, ShardPosition) => Option[String] = (_, _, _) => None,
      recordBytes: (String, String) => Option[Long] = (_, _) => None): Seq[TaskPartition] = {
    val planned = offset.plannedReads
    val rangesByStream = planned.groupBy(_.stream).map { case (s, reads) => s -> ranges(s, reads.map(_.shardId)) }
    val closedByStream = planned.map(_.stream).distinct.map(s => s -> closed(s)).toMap
    planned.groupBy(_.task).toSeq.sortBy(_._1).map { case (task, reads) =>
      val homes = if (executors.isEmpty) Nil else reads.map(r => home(r.stream, r.shardId, executors.size)).distinct
      TaskPartition(
        offset.batch,
        task,
        reads.map { r =>
          val start = offset.streams(r.stream)(r.shardId).position
          TaskShard(
            r.stream,
            r.shardId,
            offset.batch,
            start,
            rangesByStream(r.stream).get(r.shardId),
            r.read,
            expired = expired.get((r.stream, r.shardId)),
            listedClosed = closedByStream(r.stream)(r.shardId),
            startIterator = iterators(r.stream, r.shardId, start),
            recordBytes = recordBytes(r.stream, r.shardId))
        },
        legacy = offset.isLegacy,
        locations = if (homes.size == 1) Seq(executors(homes.head)) else Nil)
    }
  }
}
