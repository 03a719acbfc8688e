package io.github.sparkkinesis.source.reading

import io.github.sparkkinesis.client.ClientSettings

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

/** Settings a task needs to read its shard through enhanced fan-out; `consumerArn` was resolved by the driver. */
final case class FanOutReaderSettings(consumerArn: String, subscribeTimeoutMs: Long, maxRetries: Int)
    extends Serializable
