package io.github.sparkkinesis.metadata

/**
 * Durable record of where each micro-batch ended in each shard, written once by the task that decided it
 * (first writer wins) and read by retried tasks, replays and the driver when it plans the next batch.
 */
trait ShardEndStore extends Serializable {

  def get(stream: String, batch: Long, shardId: String): Option[ShardEndRecord]

  /**
   * Records `record` unless a record for the same stream, batch and shard exists; returns the record that
   * holds afterwards: `record` itself, or the one an earlier attempt wrote.
   */
  def recordIfAbsent(record: ShardEndRecord): ShardEndRecord

  /** Forgets every batch of `stream` numbered below `batch`. */
  def purgeBefore(stream: String, batch: Long): Unit
}
