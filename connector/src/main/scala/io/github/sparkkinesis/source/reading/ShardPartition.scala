package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

import io.github.sparkkinesis.client.{ClientSettings, HashKeyRange, KinesisClient}
import io.github.sparkkinesis.metadata.ShardEndStore
import io.github.sparkkinesis.offsets.{ShardPosition, ShardRead}

/**
 * One shard's part of a task: read shard `shardId` of `stream` in micro-batch `batch`, starting at `start`, within
 * the bounds `read` sets for a first attempt and, in a batch read, up to `until`. `expired` is what the driver
 * found trimmed when it planned this batch again after a restart, and `kinesis.failOnDataLoss=false` let it go.
 * `listedClosed`: the driver's listing showed the shard closed when it planned the task (a task never lists the
 * stream itself).
 */
final case class ShardPartition(
    stream: String,
    shardId: String,
    batch: Long,
    start: ShardPosition,
    hashKeyRange: Option[HashKeyRange],
    read: ShardRead = ShardRead.Unbounded,
    until: Option[SequenceBound] = None,
    expired: Option[Expired] = None,
    listedClosed: Boolean = false)

/** What of a batch planned before a restart retention has trimmed since, as the driver found when planning it again. */
sealed trait Expired

object Expired {
  /** Every record the batch read of the shard, its recorded end included: the batch reads nothing there now. */
  case object Whole extends Expired

  /**
   * Its start lies behind the trim horizon: the batch reads what is left up to its recorded end, if any (Kinesis
   * resumes at the horizon), and goes on where the records it expects are missing.
   */
  case object Start extends Expired
}

/** The last record a batch read takes: the one with `sequenceNumber` when `inclusive`, else the one before it. */
final case class SequenceBound(sequenceNumber: String, inclusive: Boolean) {
  def admits(sequence: String): Boolean = {
    val order = ShardPosition.compareSequenceNumbers(sequence, sequenceNumber)
    order < 0 || (inclusive && order == 0)
  }
}

/**
 * The work of one task: task `task` of micro-batch `batch` reads `shards`, several at once. Where it ends them is
 * one record in the [[ShardEndStore]] under (batch, task). `legacy` marks a batch planned by a version before 0.2.0,
 * whose records were kept per shard. `locations` are the executors Spark should prefer to run it on.
 */
final case class TaskPartition(batch: Long, task: Int, shards: Seq[ShardPartition], legacy: Boolean = false,
    locations: Seq[String] = Nil) extends InputPartition {
  override def preferredLocations(): Array[String] = locations.toArray
}

/** The reading settings every task of a query shares. */
final case class ReaderSettings(
    client: ClientSettings,
    recordsPerFetch: Int,
    fetchIntervalMs: Long,
    maxRecordsPerShard: Long,
    maxTimePerShardMs: Long,
    retryBaseMs: Long,
    retryMaxMs: Long,
    dropMisroutedRecords: Boolean,
    readsWholeRange: Boolean = false,
    fanOut: Map[String, FanOutReaderSettings] = Map.empty)

/** Creates a [[TaskReader]] per task; `clients` builds (or reuses) the executor's Kinesis client. */
final class TaskReaderFactory(
    settings: ReaderSettings,
    store: ShardEndStore,
    clients: ClientSettings => KinesisClient)
  extends PartitionReaderFactory {

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new TaskReader(partition.asInstanceOf[TaskPartition], settings, store, clients(settings.client))
}
