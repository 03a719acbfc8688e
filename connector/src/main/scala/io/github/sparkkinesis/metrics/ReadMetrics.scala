package io.github.sparkkinesis.metrics

/**
 * What the readers of one query and stream did in this JVM (an executor, or the driver in local mode), counted as they
 * go: what a retried or replayed task attempt reads again counts again, unlike the driver's [[BatchMetrics]].
 */
private[sparkkinesis] final class ReadMetrics(sourceName: String, clock: () => Long = () => System.currentTimeMillis())
    extends MetricsGroup(sourceName, clock) {

  /** Kinesis records handed to Spark (a KPL aggregate counts once). */
  val recordsRead = counter("recordsRead")

  /** Bytes of those records, as stored in Kinesis. */
  val bytesRead = counter("bytesRead")

  /** GetRecords calls, throttled ones included (a fan-out reader's checks of a closed shard's end too). */
  val getRecordsCalls = counter("getRecordsCalls")

  /** GetRecords calls throttled, and subscriptions refused as throttled or busy (ResourceInUse). */
  val throttledCalls = counter("throttledCalls")

  /** SubscribeToShard calls (enhanced fan-out). */
  val subscribeToShardCalls = counter("subscribeToShardCalls")

  /** Subscriptions that ended by design (every 5 minutes) and were renewed. */
  val subscriptionRenewals = counter("subscriptionRenewals")

  /**
   * Calls that failed for a passing reason (an expired iterator, a reset connection, a server error) and were retried.
   */
  val retries = counter("retries")

  /** Empty GetRecords pages with records ahead (MillisBehindLatest above 0) walked past. */
  val emptyPages = counter("emptyPages")
}

private[sparkkinesis] object ReadMetrics {

  /** The readers' metrics of `query` and `stream` in this JVM, registered with Spark's metrics system. */
  def of(query: String, stream: String): ReadMetrics =
    MetricsGroups.shared.get(MetricNames.source(query, stream, MetricNames.Reads))(new ReadMetrics(_))

  /** Metrics that count without being registered anywhere: for pages read outside a task (unit tests). */
  def detached: ReadMetrics = new ReadMetrics("kinesis.detached")
}
