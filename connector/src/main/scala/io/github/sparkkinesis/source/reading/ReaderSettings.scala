package io.github.sparkkinesis.source.reading

import io.github.sparkkinesis.client.ClientSettings
import io.github.sparkkinesis.metrics.MetricNames
import io.github.sparkkinesis.options.KinesisOptionsRegistry

/**
 * The reading settings every task of a query shares. `fanOutEndCheckMs`: how often a fan-out reader that is caught up
 * checks whether its shard has closed (real-time mode, whose tasks outlive reshards); None checks only a shard the
 * driver's listing showed closed, once. `failureTimeoutMs`: how long a reader goes on retrying calls that fail for a
 * passing reason (refused or reset connections, server errors) before its task fails (option
 * `kinesis.driverRetryTimeout`, which bounds the driver's retries too). `query`: the query the readers count their
 * metrics for ([[io.github.sparkkinesis.metrics.ReadMetrics]]). `maxBytesPerSecondPerShard`: the polling readers' rate
 * cap per shard (`kinesis.getRecords.maxBytesPerSecondPerShard`).
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
    fanOutEndCheckMs: Option[Long] = None,
    failureTimeoutMs: Long = KinesisOptionsRegistry.DriverRetryTimeout.default.get,
    query: String = MetricNames.BatchQuery,
    maxBytesPerSecondPerShard: Option[Long] = None)

/** Settings a task needs to read its shard through enhanced fan-out; `consumerArn` was resolved by the driver. */
final case class FanOutReaderSettings(consumerArn: String, subscribeTimeoutMs: Long, maxRetries: Int)
    extends Serializable
