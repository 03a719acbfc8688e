package io.github.sparkkinesis.source.reading

import io.github.sparkkinesis.client.ClientSettings

/**
 * The reading settings every task of a query shares. `fanOutEndCheckMs`: how often a fan-out reader that is caught up
 * checks whether its shard has closed (real-time mode, whose tasks outlive reshards); None checks only a shard the
 * driver's listing showed closed, once.
 */
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
    fanOut: Map[String, FanOutReaderSettings] = Map.empty,
    fanOutEndCheckMs: Option[Long] = None)

/** Settings a task needs to read its shard through enhanced fan-out; `consumerArn` was resolved by the driver. */
final case class FanOutReaderSettings(consumerArn: String, subscribeTimeoutMs: Long, maxRetries: Int)
    extends Serializable
