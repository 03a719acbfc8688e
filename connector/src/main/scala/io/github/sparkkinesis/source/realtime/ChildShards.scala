package io.github.sparkkinesis.source.realtime

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.compat.JavaCollections._
import io.github.sparkkinesis.client.{Backoff, KinesisClient, KinesisClientException, ShardDescription}
import io.github.sparkkinesis.metadata.{ShardEndRecord, ShardEndStore, TaskEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.reading.TaskShard

/**
 * How a real-time task goes on into the children of the shards it reads to their end, within the same batch, so that a
 * reshard's new shards are read within seconds rather than at the next batch. When the task has handed over the last
 * row of a parent ([[parentEnded]]), it records that in the metadata store under the parent's slot, naming the batch's
 * plan (for the other tasks of this run of the batch), lists the stream's shards to find the children, and reads each
 * child whose reader it is ([[RealTimeLineage.readerOf]]) once every parent still read in this batch has been read to
 * its end: its own parents it knows, another task's it learns from that task's record of this plan, looked for every
 * `waitMs`. Each parent's children are followed on a thread of `execute`'s, so a wait holds up neither the task nor
 * another parent's children.
 *
 * Another task's record counts only while no attempt but the first of either task has run: Spark's retry of a task
 * (`attempt` above 0) first records that it runs again ([[RealTimeLineage.retrySlot]]), since the attempt that wrote a
 * record may have died before its sink wrote the rows it had handed over, and the re-run hands them over again. A child
 * whose parent another task reads then waits for the next batch, as does every such child of a retried task.
 */
private[realtime] final class ChildShards(
    partition: RealTimePartition,
    store: ShardEndStore,
    client: KinesisClient,
    sleep: Long => Unit,
    startChild: TaskShard => Unit,
    isClosed: () => Boolean,
    execute: Runnable => Unit,
    attempt: Int = 0,
    waitMs: Long = ChildShards.WaitMs) {
  import partition.{batch, lineage, task}

  private val log = LoggerFactory.getLogger(getClass)

  if (attempt > 0) {
    // Before this attempt reads a row: from now on no task trusts what an earlier attempt of this one recorded.
    store.recordIfAbsent(TaskEndRecord(batch, lineage.retrySlot(task), Nil, Some(lineage.plan)))
    log.info(s"Real-time batch $batch task $task runs again (attempt $attempt): children of shards it shares with " +
      "other tasks are read by the next batch, after their parents' rows.")
  }

  /** The shards this task reads or will read: its planned ones and the children it took on. */
  private val local = ConcurrentHashMap.newKeySet[ShardRef]()
  partition.shards.foreach(s => local.add(ShardRef(s.stream, s.shardId)))

  /** The shards whose every row this task has handed over. */
  private val ended = ConcurrentHashMap.newKeySet[ShardRef]()

  /** The children this task went on into, with their parents. */
  private val parentsOf = new ConcurrentHashMap[ShardRef, Seq[String]]()

  /** The children this task reads (or read) in this batch, with their parents, for the batch's end offset. */
  def followed: Map[ShardRef, Seq[String]] = parentsOf.asScala.toMap

  /**
   * This task has handed over every row of `parent`, which it read from `start`; `named` are the children its last page
   * named (AWS names them, the emulator does not).
   */
  def parentEnded(parent: ShardRef, start: ShardPosition, named: Seq[String]): Unit = {
    ended.add(parent)
    execute(() => follow(parent, start, named))
  }

  private def follow(parent: ShardRef, start: ShardPosition, named: Seq[String]): Unit =
    try {
      lineage.slot(parent).foreach { slot =>
        val held = store.recordIfAbsent(TaskEndRecord(
          batch,
          slot,
          Seq(ShardEndRecord(parent.stream, parent.shardId, batch, start, ShardPosition.ShardEnd, 0L)),
          Some(lineage.plan)))
        if (!held.plan.contains(lineage.plan)) {
          log.info(s"Real-time batch $batch task $task: an earlier run of this batch recorded that shard $parent had " +
            "ended; that record does not count for this run, so a child of it read by another task waits for the " +
            "next batch.")
        }
      }
      childrenOf(parent, named).foreach { child =>
        val ref = ShardRef(parent.stream, child.shardId)
        val reader = local.synchronized {
          val decided = lineage.readerOf(ref, child.parents, task, local.asScala.toSet)
          if (decided.isInstanceOf[ChildReader.ThisTask]) local.add(ref)
          decided
        }
        reader match {
          case ChildReader.ThisTask(parents) =>
            if (awaitEnded(parents)) {
              log.info(s"Real-time batch $batch task $task: shard $parent has ended; reading its child $ref (parents " +
                s"${child.parents.mkString(", ")}) in this batch.")
              parentsOf.put(ref, child.parents)
              startChild(TaskShard(
                ref.stream,
                ref.shardId,
                batch,
                RealTimePlan.ChildStart,
                Some(child.hashKeyRange),
                listedClosed = child.isClosed))
            }
          case ChildReader.Other => ()
          case ChildReader.NextBatch =>
            log.info(s"Real-time batch $batch task $task: child $ref of $parent has a parent no task of this batch " +
              "planned; the next batch reads it.")
        }
      }
    } catch {
      case _: InterruptedException => ()
      case NonFatal(_) if isClosed() => ()
      case NonFatal(e) =>
        log.warn(s"Real-time batch $batch task $task: following the children of shard $parent failed; the next batch " +
          s"reads them after their parents: ${e.getMessage}")
    }

  /**
   * The children of `parent`, from a listing of its stream (which also gives their other parents and hash key ranges),
   * listed again with back-off until they show (the listing may lag the reshard a moment), for as long as the task
   * runs.
   */
  private def childrenOf(parent: ShardRef, named: Seq[String]): Seq[ShardDescription] = {
    val backoff = new Backoff(ChildShards.ListRetryBaseMs, ChildShards.ListRetryMaxMs)
    var found = Seq.empty[ShardDescription]
    var attempts = 0
    while (found.isEmpty && !isClosed() && attempts < ChildShards.ListAttempts) {
      attempts += 1
      try {
        val listing = client.listShards(parent.stream)
        found = listing.filter(d => d.parents.contains(parent.shardId) || named.contains(d.shardId))
      } catch {
        case e: KinesisClientException =>
          log.info(s"Listing the children of shard $parent failed; trying again: ${e.getMessage}")
      }
      if (found.isEmpty) sleep(backoff.nextDelayMs())
    }
    found.sortBy(_.shardId)
  }

  /** Waits until every one of `parents` has been read to its end; false if the task ended first. */
  private def awaitEnded(parents: Seq[ShardRef]): Boolean = {
    def done(p: ShardRef) = ended.contains(p) || (!local.contains(p) && recordedEnded(p))
    while (!parents.forall(done)) {
      if (isClosed()) return false
      sleep(waitMs)
    }
    true
  }

  /**
   * Whether the task reading `parent` recorded that it read it to its end in this run of the batch, with neither task
   * run again since: a record of an earlier run (before a restart) or of an attempt that failed says nothing about the
   * rows the parent's present reader has handed over.
   */
  private def recordedEnded(parent: ShardRef): Boolean =
    attempt == 0 && lineage.slot(parent).exists { slot =>
      store.get(batch, slot).exists(r =>
        r.plan.contains(lineage.plan) && r.ends.exists(e =>
          e.stream == parent.stream && e.shardId == parent.shardId && e.end == ShardPosition.ShardEnd))
    } && !lineage.readers.get(parent).exists(reader => store.get(batch, lineage.retrySlot(reader)).isDefined)
}

private[realtime] object ChildShards {

  /** How often a task looks for another task's record that a parent it waits for has ended. */
  val WaitMs = 500L
  val ListAttempts = 20
  val ListRetryBaseMs = 200L
  val ListRetryMaxMs = 2000L
}
