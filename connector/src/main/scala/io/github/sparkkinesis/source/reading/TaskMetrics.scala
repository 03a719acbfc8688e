package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.connector.metric.CustomTaskMetric

/**
 * The task metrics a reader reports to the Spark UI, by name: records, bytes, GetRecords calls and throttled calls of
 * one attempt ([[io.github.sparkkinesis.source.SourceMetrics]] declares them to Spark, which sums them over a batch's
 * tasks).
 */
object TaskMetrics {
  val RecordsRead = "recordsRead"
  val BytesRead = "bytesRead"
  val GetRecordsCalls = "getRecordsCalls"
  val ThrottledCalls = "throttledCalls"

  /** One attempt's reading so far, as the values of the metrics above. */
  def values(records: Long, bytes: Long, calls: Long, throttled: Long): Array[CustomTaskMetric] =
    Array(RecordsRead -> records, BytesRead -> bytes, GetRecordsCalls -> calls, ThrottledCalls -> throttled).map {
      case (metric, v) => new CustomTaskMetric {
          override def name(): String = metric
          override def value(): Long = v
        }
    }
}
