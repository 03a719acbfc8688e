package io.github.sparkkinesis.source

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

import io.github.sparkkinesis.client.{ClientSettings, HashKeyRange, KinesisClient}
import io.github.sparkkinesis.metadata.ShardEndStore
import io.github.sparkkinesis.offsets.{ShardPosition, ShardRead}

/**
 * The work of one task: read shard `shardId` of `stream` in micro-batch `batch`, starting at `start`, within the
 * bounds `read` sets for a first attempt.
 */
final case class ShardPartition(
    stream: String,
    shardId: String,
    batch: Long,
    start: ShardPosition,
    hashKeyRange: Option[HashKeyRange],
    read: ShardRead = ShardRead.Unbounded)
  extends InputPartition

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
    fanOut: Option[efo.FanOutReaderSettings] = None)

/** Creates a [[ShardPartitionReader]] per task; `clients` builds (or reuses) the executor's Kinesis client. */
final class ShardReaderFactory(
    settings: ReaderSettings,
    store: ShardEndStore,
    clients: ClientSettings => KinesisClient)
  extends PartitionReaderFactory {

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new ShardPartitionReader(partition.asInstanceOf[ShardPartition], settings, store, clients(settings.client))
}
