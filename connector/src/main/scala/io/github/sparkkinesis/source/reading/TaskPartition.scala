package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.connector.read.InputPartition

import io.github.sparkkinesis.client.HashKeyRange
import io.github.sparkkinesis.metadata.ShardEndStore
import io.github.sparkkinesis.offsets.{ShardPosition, ShardRead}

/**
 * The work of one task: task `task` of micro-batch `batch` reads `shards`, several at once. Where it ends them is one
 * record in the [[ShardEndStore]] under (batch, task). `legacy` marks a batch planned by a version before 0.2.0, whose
 * records were kept per shard. `locations` are the executors Spark should prefer to run it on.
 */
final case class TaskPartition(
    batch: Long,
    task: Int,
    shards: Seq[TaskShard],
    legacy: Boolean = false,
    locations: Seq[String] = Nil) extends InputPartition {
  override def preferredLocations(): Array[String] = locations.toArray
}

/**
 * One shard of a task (not Spark's input partition: that is the [[TaskPartition]] holding it): read shard `shardId` of
 * `stream` in micro-batch `batch`, starting at `start`, within the bounds `read` sets for a first attempt and, in a
 * batch read, up to `until`. `expired` is what the driver found trimmed when it planned this batch again after a
 * restart, and `kinesis.failOnDataLoss=false` let it go. `listedClosed`: the driver's listing showed the shard closed
 * when it planned the task (a task never lists the stream itself). `startIterator`: a GetRecords iterator that starts
 * exactly at `start`, from the driver's check that found records there when it planned this batch, so that the task
 * needs no GetShardIterator call (valid until 5 minutes after Kinesis issued it, which may be before the check: an
 * iterator a check went on from; an expired one is replaced from `start`); None for a batch planned again after a
 * restart, and with enhanced fan-out. `recordBytes`: the shard's average record as the driver last saw it (its last
 * batch's read, or the record its check found), by which the task sizes its first page to its share of the task's fetch
 * budget; None when the driver has not seen one.
 */
final case class TaskShard(
    stream: String,
    shardId: String,
    batch: Long,
    start: ShardPosition,
    hashKeyRange: Option[HashKeyRange],
    read: ShardRead = ShardRead.Unbounded,
    until: Option[SequenceBound] = None,
    expired: Option[Expired] = None,
    listedClosed: Boolean = false,
    startIterator: Option[String] = None,
    recordBytes: Option[Long] = None)
