package io.github.sparkkinesis.metrics

import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.source.{Lag, SourceMetrics}

/**
 * The driver's metrics of one stream a query reads, from the shard-end records of its batches ([[SourceMetrics]]
 * computes them, as for the query's progress): each batch counts once, whatever its tasks' retries read again.
 */
private[sparkkinesis] final class BatchMetrics(sourceName: String, clock: () => Long = () => System.currentTimeMillis())
    extends MetricsGroup(sourceName, clock) {
  override def evictable: Boolean = false // the query's stream unregisters it when the query stops

  @volatile private var lag: Option[Lag] = None
  @volatile private var shards = (0, 0)

  gauge("maxMillisBehindLatest")(lag.fold(0L)(_.maxMs))
  gauge("avgMillisBehindLatest")(lag.fold(0L)(_.avgMs))
  gauge("shardsOpen")(shards._1.toLong)
  gauge("shardsClosed")(shards._2.toLong)
  private val records = counter("recordsRead")
  private val bytes = counter("bytesRead")
  private val calls = counter("getRecordsCalls")
  private val throttled = counter("throttledCalls")
  private val checks = counter("driverGetRecordsCalls")
  private val batches = counter("batchesRead")

  /** A batch that read shards of the stream, whose tasks wrote `ends`. */
  def batchRead(ends: Seq[ShardEndRecord]): Unit = {
    SourceMetrics.lagOf(ends).foreach(l => lag = Some(l))
    val reads = SourceMetrics.readsOf(ends)
    records.inc(reads.records)
    bytes.inc(reads.bytes)
    calls.inc(reads.getRecordsCalls)
    throttled.inc(reads.throttledCalls)
    batches.inc()
  }

  /** The stream's latest listing: shards open and closed. */
  def listed(openAndClosed: (Int, Int)): Unit = shards = openAndClosed

  /** GetRecords calls the driver made to check shards for new records. */
  def driverChecks(n: Long): Unit = checks.inc(n)
}

/**
 * The driver's metrics of the streams `query` reads ([[BatchMetrics]], one per stream), updated when Spark asks for a
 * batch's progress metrics, each batch counted once; [[stop]] unregisters them and the query's other sources in this
 * JVM.
 */
private[sparkkinesis] final class QueryMetrics(
    val query: String,
    streams: Seq[String],
    groups: MetricsGroups = MetricsGroups.shared) {

  private val byStream =
    streams.map(s => s -> groups.get(MetricNames.source(query, s, MetricNames.Batches))(new BatchMetrics(_))).toMap
  private var lastBatch = Long.MinValue
  private var checksSeen = Map.empty[String, Long]

  /**
   * Batch `batch` ended as `ends` say (per stream); `shards`: each stream's listing (open, closed); `driverCalls`: each
   * stream's driver checks so far.
   */
  def update(
      batch: Long,
      ends: Map[String, Seq[ShardEndRecord]],
      shards: Map[String, (Int, Int)],
      driverCalls: Map[String, Long]): Unit = synchronized {
    if (batch > lastBatch) {
      lastBatch = batch
      ends.foreach { case (s, e) => if (e.nonEmpty) byStream.get(s).foreach(_.batchRead(e)) }
    }
    shards.foreach { case (s, counts) => byStream.get(s).foreach(_.listed(counts)) }
    driverCalls.foreach { case (s, n) =>
      byStream.get(s).foreach(_.driverChecks(n - checksSeen.getOrElse(s, 0L)))
      checksSeen += s -> n
    }
  }

  def stop(): Unit = groups.releaseQuery(query)
}
