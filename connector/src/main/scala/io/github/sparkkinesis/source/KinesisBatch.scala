package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}

import io.github.sparkkinesis.client.{Backoff, ClientSettings, KinesisClient, ShardDescription}
import io.github.sparkkinesis.metadata.{ShardEndStore, TaskEndRecord}
import io.github.sparkkinesis.offsets.{ShardPosition, ShardRead, StartingPosition}
import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.planning.{ShardListing, TaskPlan, TrackedShards}
import io.github.sparkkinesis.source.reading.{
  ReaderSettings,
  SequenceBound,
  TaskPartition,
  TaskReaderFactory,
  TaskShard
}

/**
 * A batch read (`spark.read`) of a bounded range: every shard of every stream, from `kinesis.startingPosition`
 * (TRIM_HORIZON when unset) to `kinesis.endingPosition` (LATEST when unset), planned once. Each shard's end is fixed
 * when the read is planned, as an arrival time no later than the planning instant and optionally a sequence number, so
 * a retried task reads the same records; the arrival bound is the driver's clock against Kinesis' arrival times, as for
 * Trigger.AvailableNow.
 */
final class KinesisBatch(
    options: KinesisSourceOptions,
    clients: ClientSettings => KinesisClient,
    parallelism: () => Int,
    clock: () => Long = () => System.currentTimeMillis())
    extends Batch {

  private lazy val partitions: Array[InputPartition] = {
    val nowMs = clock()
    val client = clients(options.client)
    val shards = options.streams.flatMap { stream =>
      val listing = new ShardListing(
        () => client,
        stream,
        0L,
        options.driverRetryTimeoutMs,
        new Backoff(options.client.retry.baseDelayMs, options.client.retry.maxDelayMs),
        clock).current(force = true)
      val starts = TrackedShards.initial(stream, options.batchStartingPosition, listing, nowMs)
      val ends = endsOf(stream, listing, nowMs)
      listing.flatMap { d =>
        val start = starts(d.shardId).position
        ends(d.shardId).filterNot(_ => start == ShardPosition.ShardEnd).map { case (arrivedBefore, until) =>
          TaskShard(
            stream,
            d.shardId,
            0L,
            start,
            Some(d.hashKeyRange),
            ShardRead(None, arrivedBefore),
            until,
            listedClosed = d.isClosed)
        }
      }
    }
    val tasks = TaskPlan.taskCount(shards.size, options.shardsPerTask, parallelism())
    shards.zipWithIndex.groupBy(_._2 % tasks).toSeq.sortBy(_._1).map { case (task, group) =>
      TaskPartition(0L, task, group.map(_._1)): InputPartition
    }.toArray
  }

  override def planInputPartitions(): Array[InputPartition] = partitions

  override def createReaderFactory(): PartitionReaderFactory = new TaskReaderFactory(
    ReaderSettings(
      options.client,
      options.recordsPerFetch,
      options.fetchIntervalMs,
      maxRecordsPerShard = Long.MaxValue,
      maxTimePerShardMs = KinesisBatch.Unlimited,
      options.client.retry.baseDelayMs,
      options.client.retry.maxDelayMs,
      options.dropMisroutedRecords,
      readsWholeRange = true,
      failureTimeoutMs = options.driverRetryTimeoutMs,
      maxBytesPerSecondPerShard = options.maxBytesPerSecondPerShard),
    KinesisBatch.Unrecorded,
    clients)

  /**
   * Per shard, where the read ends: an arrival bound and a last sequence number; None for a shard it reads nothing of
   * (an ending position at the trim horizon).
   */
  private def endsOf(
      stream: String,
      listing: Seq[ShardDescription],
      nowMs: Long): Map[String, Option[(Option[Long], Option[SequenceBound])]] = {
    // Records that arrive after the read is planned could reach one attempt of a task and not another: no end lies
    // later than the planning instant.
    val latest = Some((Some(nowMs + 1), None))
    def bound(position: Option[ShardPosition]): Option[(Option[Long], Option[SequenceBound])] = position match {
      case None => latest
      case Some(ShardPosition.AtTimestamp(ms)) => Some((Some(math.min(ms, nowMs + 1)), None))
      case Some(ShardPosition.AtSequenceNumber(seq)) =>
        Some((Some(nowMs + 1), Some(SequenceBound(seq, inclusive = false))))
      case Some(ShardPosition.AfterSequenceNumber(seq)) =>
        Some((Some(nowMs + 1), Some(SequenceBound(seq, inclusive = true))))
      case Some(_) => None // the trim horizon: nothing before it
    }
    val ids = listing.map(_.shardId)
    options.endingPosition match {
      case None | Some(StartingPosition.Latest) => ids.map(_ -> latest).toMap
      case Some(StartingPosition.AtTimestamp(ms)) => ids.map(_ -> bound(Some(ShardPosition.AtTimestamp(ms)))).toMap
      case Some(StartingPosition.TrimHorizon) => ids.map(_ -> None).toMap
      case Some(StartingPosition.PerShard(named)) =>
        val unknown = named.keySet.diff(ids.toSet)
        if (unknown.nonEmpty) {
          throw new IllegalArgumentException(s"Option kinesis.endingPosition names shard(s) " +
            s"${unknown.toSeq.sorted.mkString(", ")} that stream $stream does not have (or no longer retains). Its " +
            s"shards are: ${ids.sorted.mkString(", ")}.")
        }
        ids.map(id => id -> bound(named.getOrElse(id, None))).toMap
    }
  }
}

private object KinesisBatch {

  /** No time limit per shard: a batch read reads its whole range (a duration, so no overflow when added to now). */
  val Unlimited: Long = Long.MaxValue / 4

  /** A batch read keeps no records of where its tasks ended: its bounds fix the range before it starts. */
  object Unrecorded extends ShardEndStore {
    override def get(batch: Long, task: Int): Option[TaskEndRecord] = None
    override def getAll(batch: Long, tasks: Seq[Int]): Map[Int, TaskEndRecord] = Map.empty
    override def recordIfAbsent(record: TaskEndRecord): TaskEndRecord = record
    override def purgeBefore(batch: Long): Unit = ()
  }
}
