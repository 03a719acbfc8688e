package io.github.sparkkinesis.source.realtime

import org.apache.spark.sql.connector.read.streaming.PartitionOffset

import io.github.sparkkinesis.metadata.ShardEndRecord

/**
 * Where a real-time task stands when its batch ends: per shard it read, the end of what it handed over and what it saw
 * (as a [[ShardEndRecord]]: start, position after the last row handed over, records read and read statistics), and the
 * parents of each child shard it found while the batch ran. The driver merges these into the batch's end offset.
 */
final case class RealTimeTaskOffset(task: Int, ends: Seq[ShardEndRecord], children: Map[ShardRef, Seq[String]])
    extends PartitionOffset
