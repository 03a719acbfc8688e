package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{ClientSettings, KinesisClient}
import io.github.sparkkinesis.metadata.{ShardEndRecord, ShardEndStore, TaskEndRecord}

/**
 * Reads a task's shards for one micro-batch, all at once ([[ParallelRows]]), one [[ShardReader]] per shard, their pages
 * within one fetch budget ([[FetchBudget]]), so a task of many backlogged shards holds no more than one of a few. The
 * first attempt to hand over every row records where it ended each shard, in one [[TaskEndRecord]]; any later attempt
 * finds that record at its start and reads exactly the same records. An attempt that ends a shard elsewhere than the
 * recorded attempt fails, so its output is discarded rather than diverging.
 */
final class TaskReader(
    partition: TaskPartition,
    settings: ReaderSettings,
    store: ShardEndStore,
    client: KinesisClient,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep)
    extends PartitionReader[InternalRow] {

  import partition.{batch, task}

  private val log = LoggerFactory.getLogger(getClass)
  private val recorded: Option[TaskEndRecord] = store.get(batch, task)
  private val budget = FetchBudget.ofMicroBatchTask(() => partition.shards.size)
  private val shardReaders = partition.shards.map { shard =>
    new ShardReader(shard, recordedEnd(shard), settings, client, clock, sleep, budget = budget)
  }
  private val rows: PartitionReader[InternalRow] =
    if (shardReaders.size == 1) shardReaders.head else new ParallelRows(shardReaders, s"batch $batch task $task")
  private var finished = false

  override def next(): Boolean =
    if (rows.next()) true
    else {
      if (!finished) finish()
      finished = true
      false
    }

  override def get(): InternalRow = rows.get()

  override def close(): Unit = rows.close()

  /** This attempt's reading so far, for the Spark UI's task metrics ([[TaskMetrics]]). */
  override def currentMetricsValues(): Array[CustomTaskMetric] = {
    val all = shardReaders.map(_.currentMetricsValues())
    all.headOption.fold(Array.empty[CustomTaskMetric])(_.indices.map { i =>
      val metric = all.head(i).name()
      val total = all.map(_(i).value()).sum
      new CustomTaskMetric {
        override def name(): String = metric
        override def value(): Long = total
      }: CustomTaskMetric
    }.toArray)
  }

  /** The end recorded for `shard`: in this task's record, or for a batch planned before 0.2.0 in the shard's own. */
  private def recordedEnd(shard: TaskShard): Option[ShardEndRecord] = {
    val found = recorded match {
      case Some(record) => Some(record.ends.find(e => e.stream == shard.stream && e.shardId == shard.shardId)
          .getOrElse(throw foreign(s"The end recorded for task $task of batch $batch does not name shard " +
            s"${shard.shardId} of stream ${shard.stream}, which that task reads")))
      case None if partition.legacy => store.legacyGet(shard.stream, batch, shard.shardId)
      case None => None
    }
    found.filter(_.start != shard.start).foreach { r =>
      throw foreign(s"The shard end recorded for batch $batch of shard ${shard.shardId} (stream ${shard.stream}) " +
        s"starts at ${r.start}, but this batch starts at ${shard.start}")
    }
    found
  }

  private def foreign(what: String): IllegalStateException =
    new IllegalStateException(s"$what: ${store.describe} holds another query's records. ${store.foreignRecordsAdvice}")

  /** Records where this attempt ended each shard, or checks that against the record an earlier attempt wrote. */
  private def finish(): Unit = if (recorded.isEmpty) {
    val ours = TaskEndRecord(batch, task, shardReaders.map(_.endRecord.get))
    val holding = store.recordIfAbsent(ours)
    if (!holding.sameRanges(ours)) {
      throw new IllegalStateException(
        s"Another attempt of task $task of batch $batch recorded other ends for its shards " +
          s"(${ends(holding)}) than this attempt reached (${ends(ours)}). This attempt fails so that its output " +
          "is discarded; the recorded attempt's output stands.")
    }
    log.debug(s"batch $batch task $task: ${ends(ours)}")
  }

  private def ends(record: TaskEndRecord): String =
    record.ends.map(e => s"${e.stream}/${e.shardId} at ${e.end}").sorted.mkString(", ")
}

/**
 * Creates a [[TaskReader]] per task; `clients` builds (or reuses) the executor's Kinesis client. `clock` and `sleep`
 * are the readers' time (tests give simulated time, so that pacing does not wait in real time).
 */
final class TaskReaderFactory(
    settings: ReaderSettings,
    store: ShardEndStore,
    clients: ClientSettings => KinesisClient,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep)
    extends PartitionReaderFactory {

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new TaskReader(partition.asInstanceOf[TaskPartition], settings, store, clients(settings.client), clock, sleep)
}
