package io.github.sparkkinesis.metrics

import java.util.concurrent.atomic.AtomicLong

/** What the sink's tasks of one query wrote to one stream in this JVM (an executor, or the driver in local mode). */
private[sparkkinesis] final class WriteMetrics(sourceName: String, clock: () => Long = () => System.currentTimeMillis())
    extends MetricsGroup(sourceName, clock) {

  /** Rows Kinesis confirmed. */
  val rowsWritten = counter("rowsWritten")

  /** Bytes of those rows: partition key and data, as Kinesis counts them. */
  val bytesWritten = counter("bytesWritten")

  /** Rows that failed for good (their task fails and Spark retries it). */
  val rowsFailed = counter("rowsFailed")

  /** Rows written or failed after more than one attempt (the KPL's retries, or PutRecord's for large rows). */
  val rowsRetried = counter("rowsRetried")

  /** Rows handed to the producer and not yet confirmed or failed. */
  val rowsOutstanding = new AtomicLong
  gauge("rowsOutstanding")(rowsOutstanding.get)
}

private[sparkkinesis] object WriteMetrics {

  /** The sink's metrics of `query` and `stream` in this JVM, registered with Spark's metrics system. */
  def of(query: String, stream: String): WriteMetrics =
    MetricsGroups.shared.get(MetricNames.source(query, stream, MetricNames.Writes))(new WriteMetrics(_))

  /** Metrics that count without being registered anywhere: for writers made outside a task (unit tests). */
  def detached: WriteMetrics = new WriteMetrics("kinesis.detached")
}

/** The executor's producers, shared by every query that writes from it: their own queues. */
private[sparkkinesis] final class ProducerMetrics(sourceName: String, outstanding: () => Long)
    extends MetricsGroup(sourceName, () => System.currentTimeMillis()) {
  override def evictable: Boolean = false

  /** Records the executor's producers (KPL or PutRecords) hold, not yet written or failed (aggregated or not). */
  gauge("outstandingRecords")(outstanding())
}

private[sparkkinesis] object ProducerMetrics {

  /** The name of this JVM's producers' source. */
  val SourceName = "kinesis.producers"

  /** Registers the KPL queue's gauge once per JVM. */
  def register(outstanding: () => Long): ProducerMetrics =
    MetricsGroups.shared.get(SourceName)(new ProducerMetrics(_, outstanding))
}
