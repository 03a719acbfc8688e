package io.github.sparkkinesis.source.realtime

import java.util.UUID

import org.apache.spark.sql.connector.read.InputPartition

import io.github.sparkkinesis.source.reading.TaskShard

/** A shard of one stream, as real-time mode names it across tasks. */
final case class ShardRef(stream: String, shardId: String) {
  override def toString: String = s"$stream/$shardId"
}

/**
 * The work of one real-time task: task `task` of real-time batch `batch` reads `shards` from their starts, in parallel,
 * for as long as the batch runs, and goes on into the children of a shard it reads to its end when `lineage` makes it
 * their reader. It prefers `locations`: the executor where the last batch's task of these shards parked their readers.
 */
final case class RealTimePartition(
    batch: Long,
    task: Int,
    shards: Seq[TaskShard],
    lineage: RealTimeLineage,
    locations: Seq[String] = Nil)
    extends InputPartition {
  override def preferredLocations(): Array[String] = locations.toArray
}

/**
 * What every task of a real-time batch knows of the shards the driver planned, so that the tasks agree, without talking
 * to each other, on who reads a child shard that appears while the batch runs (a reshard): the task that reads the
 * child's first parent still being read (by shard id), once every such parent has been read to its end. A parent read
 * by another task is known to be finished by the record that task leaves in the metadata store under the parent's
 * `slot` (a task number no real task has), naming `plan`: a record of another planning of the same batch (one that ran
 * before a restart, whose rows the sink may never have committed) is never taken for this one's.
 *
 * @param readers
 *   the task that reads each shard planned for the batch
 * @param finished
 *   the shards the batch's offset has read to their end already
 * @param plan
 *   what tells this planning of the batch from every other: made afresh each time the driver plans one
 */
final case class RealTimeLineage(
    readers: Map[ShardRef, Int],
    finished: Set[ShardRef],
    plan: String = UUID.randomUUID().toString) {

  /**
   * The slot under which a retry of task `task` records, before it reads, that the task runs again in this batch
   * (whatever the planning: a record there from an earlier run also means that a task ran twice).
   */
  def retrySlot(task: Int): Int = RealTimeLineage.RetrySlotBase + task

  /** The slot under which a task records that it read `shard` to its end, if the driver planned it. */
  def slot(shard: ShardRef): Option[Int] = slots.get(shard)

  private lazy val slots: Map[ShardRef, Int] =
    readers.keys.toSeq.sortBy(r => (r.stream, r.shardId)).zipWithIndex.map { case (r, i) =>
      r -> (RealTimeLineage.SlotBase + i)
    }.toMap

  /**
   * Who reads child shard `child`, whose parents are `parents`, as task `task` sees it, having read `local` itself:
   * this task, waiting for the parents it lists; another task; or nobody in this batch (a parent no task of the batch
   * knows, such as one created while the batch runs and read by another task), which leaves it to the next batch.
   */
  def readerOf(child: ShardRef, parents: Seq[String], task: Int, local: Set[ShardRef]): ChildReader = {
    val unfinished = parents.map(ShardRef(child.stream, _)).filterNot(finished).sortBy(_.shardId)
    if (readers.contains(child) || local(child)) ChildReader.Other
    else if (unfinished.exists(p => !local(p) && !readers.contains(p))) ChildReader.NextBatch
    else unfinished.headOption match {
      case Some(first) if local(first) || readers.get(first).contains(task) => ChildReader.ThisTask(unfinished)
      case Some(_) => ChildReader.Other
      case None => ChildReader.NextBatch // no parent read in this batch: the driver plans it
    }
  }
}

object RealTimeLineage {

  /** The first slot number: far above any task number a batch has. */
  val SlotBase = 1000000

  /** The first retry slot ([[RealTimeLineage.retrySlot]]): above every shard's slot. */
  val RetrySlotBase = 2000000
}

/** Who reads a child shard that appeared during a real-time batch ([[RealTimeLineage.readerOf]]). */
sealed trait ChildReader

object ChildReader {

  /** This task, once each of `parents` has been read to its end. */
  final case class ThisTask(parents: Seq[ShardRef]) extends ChildReader

  /** Another task of the batch. */
  case object Other extends ChildReader

  /** No task of this batch; the next batch's plan reads it after its parents. */
  case object NextBatch extends ChildReader
}
