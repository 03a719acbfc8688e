package io.github.sparkkinesis.source.planning

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.metadata.{ShardEndRecord, ShardEndStore}
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardState}

/**
 * Where the batch after a given offset starts: each shard that offset's batch read moves to the end its tasks recorded
 * ([[BatchEnds]]), and each stream's [[StreamPlanner]] learns how that batch ended.
 *
 * @param lastPlanned
 *   the batch whose offset this run last handed to Spark
 * @param metadataOnExecutorDisks
 *   whether the metadata path is on a local disk while tasks run on other machines, so that the driver may never see
 *   what tasks record
 */
private[source] final class NextBatchStart(
    ends: BatchEnds,
    store: ShardEndStore,
    planners: Map[String, StreamPlanner],
    lastPlanned: () => Option[Long],
    metadataOnExecutorDisks: Boolean) {
  import NextBatchStart.Moved

  private val log = LoggerFactory.getLogger(getClass)

  /** The positions after the batch of the last `after` start, cached: they cost a store read per task. */
  private var basis: Option[(KinesisSourceOffset, Moved)] = None

  /** Whether this run has moved on from a batch yet: the first may be another run's, real-time or not. */
  private var resumed = false

  /** Batches in a row, planned by this run, of which the driver found some recorded end missing. */
  private var batchesWithoutEnds = 0

  /**
   * The offset of the batch after `start`'s: each shard that batch read moves to the end its tasks recorded. A shard
   * without a recorded end (its batch was never read to the end, say by a `limit` in `foreachBatch`) is read again from
   * the same place, so nothing is skipped.
   */
  def after(start: KinesisSourceOffset): Moved = basis match {
    case Some((cachedStart, moved)) if cachedStart == start => moved
    case _ =>
      val records = ends.of(start)
      val moved = start.streams.map { case (s, shards) =>
        s -> (shards ++ records.collect { case ((`s`, id), record) =>
          id -> movedTo(start.batch, s, id, shards(id), record)
        })
      }
      // A run that resumes after a real-time batch learns what its tasks saw, for the trim horizon's check.
      val resumedRealTime =
        if (resumed || records.nonEmpty) Map.empty[(String, String), ShardEndRecord] else ends.ofRealTime(start)
      resumed = true
      val found = records.collect { case ((s, id), Some(r)) => (s, id, r) } ++
        resumedRealTime.map { case ((s, id), r) => (s, id, r) }
      val lastRead = found.groupBy(_._1).map { case (s, rs) => s -> rs.map(r => r._2 -> r._3).toMap }
        .withDefaultValue(Map.empty[String, ShardEndRecord])
      // Pacing only after a batch this run planned: after a restart nobody knows when the last one ended, Trigger.Once
      // gets one look, and a bound reached in an earlier AvailableNow run says nothing about this run's.
      if (lastPlanned().contains(start.batch)) {
        checkEndsVisible(start.batch, records.values.toSeq)
        records.keys.groupBy(_._1).foreach { case (s, read) =>
          planners.get(s).foreach(_.batchEnded(read.map(_._2).toSeq, lastRead(s)))
        }
      } else lastRead.foreach { case (s, rs) => planners.get(s).foreach(_.resumedAfter(rs)) }
      val next = Moved(KinesisSourceOffset(start.batch + 1, moved), lastRead)
      basis = Some(start -> next)
      next
  }

  /**
   * A batch is read again when its ends were not recorded (its tasks never finished, say because of a `limit`), but
   * when the metadata path is a local disk of a cluster, the tasks record on their own machines' disks, and the driver
   * sees only the ends written on its own machine, if any: the query would read the same records forever. There, a few
   * batches in a row with any end missing fail the query; on a shared file system a missing end is a task cut short,
   * and the batch is read again.
   */
  private def checkEndsVisible(batch: Long, found: Seq[Option[ShardEndRecord]]): Unit = {
    val missing = found.count(_.isEmpty)
    batchesWithoutEnds = if (missing > 0) batchesWithoutEnds + 1 else 0
    if (metadataOnExecutorDisks && batchesWithoutEnds >= NextBatchStart.BatchesWithoutEndsTolerated) {
      val which = if (missing == found.size) "none of the shard ends" else s"$missing of the ${found.size} shard ends"
      throw new IllegalStateException(s"The driver has found $which its tasks recorded in ${store.describe}, in " +
        s"each of the last $batchesWithoutEnds batches (up to batch $batch), and the metadata path is on a local " +
        "disk while tasks run on other machines: each task records on its own machine's disk, so the query would " +
        "read the same records forever. Put the checkpoint (or kinesis.metadataPath) on a file system the driver " +
        "and every executor share, such as HDFS, or use kinesis.metadataCommitterType=DYNAMODB.")
    }
  }

  private def movedTo(
      batch: Long,
      stream: String,
      id: String,
      state: ShardState,
      record: Option[ShardEndRecord]): ShardState = record match {
    case Some(r) if r.start == state.position => state.copy(position = r.end)
    case Some(r) => throw new IllegalStateException(
        s"The shard end recorded for batch $batch of shard $id (stream $stream) starts at ${r.start}, but the " +
          s"checkpoint says ${state.position}: ${store.describe} holds another query's records. " +
          store.foreignRecordsAdvice)
    case None =>
      log.warn(s"No end was recorded for batch $batch of shard $id (stream $stream); the next batch reads it " +
        s"again from ${state.position}.")
      state
  }
}

private[source] object NextBatchStart {

  /** The offset after `start`'s batch, and the shard-end records of the shards that batch read, per stream. */
  final case class Moved(offset: KinesisSourceOffset, lastRead: Map[String, Map[String, ShardEndRecord]])

  /** Batches in a row with a recorded end missing after which a query with its metadata on executors' disks fails. */
  val BatchesWithoutEndsTolerated = 3
}
