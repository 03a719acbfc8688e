package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric}

import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.client.StreamRef
import io.github.sparkkinesis.source.reading.TaskMetrics

/**
 * The source's metrics: per task in the Spark UI (records, bytes, GetRecords calls, throttled calls, summed over a
 * batch's tasks), and per micro-batch in every `StreamingQueryProgress` (its `sources[].metrics`), from the shard-end
 * records the batch's tasks wrote and the shards the query tracks.
 */
object SourceMetrics {
  import TaskMetrics._

  /** The driver's checks for new records since the previous progress report (one GetRecords call each). */
  val DriverGetRecordsCalls = "driverGetRecordsCalls"

  /** The task metrics a scan supports; Spark re-creates them by class name in the UI. */
  def supported: Array[CustomMetric] =
    Array(new RecordsReadMetric, new BytesReadMetric, new GetRecordsCallsMetric, new ThrottledCallsMetric)

  /**
   * The metrics of the batch whose shard-end records are `ends` (per stream), given each stream's listed shards (open,
   * closed): lag of the shards it read (avg, max, min MillisBehindLatest when their tasks stopped), shards open and
   * closed, shards read, and the records, bytes, calls and throttled calls of its tasks; over all streams under the
   * plain names, and per stream under `stream.<stream name>.` names. Records written by 0.1.0 count towards shards and
   * records.
   */
  def ofBatch(ends: Map[String, Seq[ShardEndRecord]], shards: Map[String, (Int, Int)]): Map[String, String] = {
    val perStream = shards.keys.toSeq.flatMap { s =>
      of(ends.getOrElse(s, Nil), shards(s)).map { case (k, v) => s"$StreamPrefix${StreamRef.nameOf(s)}.$k" -> v }
    }
    val total = (shards.values.map(_._1).sum, shards.values.map(_._2).sum)
    (of(ends.values.flatten.toSeq, total) ++ perStream).map { case (k, v) => k -> v.toString }.toMap
  }

  /** The prefix of a stream's own metrics: `stream.orders.avgMsBehindLatest`, say. */
  val StreamPrefix = "stream."

  /** The batch's average and greatest MillisBehindLatest over the shards it read. */
  val AvgMsBehindLatest = "avgMsBehindLatest"
  val MaxMsBehindLatest = "maxMsBehindLatest"

  private def of(ends: Seq[ShardEndRecord], shards: (Int, Int)): Seq[(String, Long)] = {
    val stats = ends.flatMap(_.stats)
    val lags = stats.map(_.millisBehindLatest)
    val lag = if (lags.isEmpty) Nil
    else Seq(
      AvgMsBehindLatest -> lags.sum / lags.size,
      MaxMsBehindLatest -> lags.max,
      "minMsBehindLatest" -> lags.min)
    lag ++ Seq(
      "shardsOpen" -> shards._1.toLong,
      "shardsClosed" -> shards._2.toLong,
      "shardsRead" -> ends.size.toLong,
      RecordsRead -> ends.map(_.recordCount).sum,
      BytesRead -> stats.map(_.bytes).sum,
      GetRecordsCalls -> stats.map(_.getRecordsCalls).sum,
      ThrottledCalls -> stats.map(_.throttledCalls).sum)
  }
}

/** A task metric Spark sums over a batch's tasks; subclasses have no-argument constructors, as the UI needs. */
abstract class KinesisSumMetric(metricName: String, text: String) extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

final class RecordsReadMetric extends KinesisSumMetric(TaskMetrics.RecordsRead, "Kinesis records read")
final class BytesReadMetric extends KinesisSumMetric(TaskMetrics.BytesRead, "Kinesis bytes read")
final class GetRecordsCallsMetric extends KinesisSumMetric(TaskMetrics.GetRecordsCalls, "GetRecords calls")
final class ThrottledCallsMetric extends KinesisSumMetric(TaskMetrics.ThrottledCalls, "GetRecords calls throttled")
