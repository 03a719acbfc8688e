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
    val lag = lagOf(ends).toSeq.flatMap(l =>
      Seq(AvgMsBehindLatest -> l.avgMs, MaxMsBehindLatest -> l.maxMs, "minMsBehindLatest" -> l.minMs))
    val reads = readsOf(ends)
    lag ++ Seq(
      "shardsOpen" -> shards._1.toLong,
      "shardsClosed" -> shards._2.toLong,
      "shardsRead" -> ends.size.toLong,
      RecordsRead -> reads.records,
      BytesRead -> reads.bytes,
      GetRecordsCalls -> reads.getRecordsCalls,
      ThrottledCalls -> reads.throttledCalls)
  }

  /**
   * How far behind the tip the shards of `ends` were when their tasks stopped (Kinesis' MillisBehindLatest): average,
   * maximum and minimum over the shards; None when no record says (none, or only records written by 0.1.0).
   */
  def lagOf(ends: Seq[ShardEndRecord]): Option[Lag] = {
    val lags = ends.flatMap(_.stats).map(_.millisBehindLatest)
    if (lags.isEmpty) None else Some(Lag(lags.sum / lags.size, lags.max, lags.min))
  }

  /** What the tasks that wrote `ends` read and spent: records, bytes, GetRecords calls, throttled calls. */
  def readsOf(ends: Seq[ShardEndRecord]): BatchReads = {
    val stats = ends.flatMap(_.stats)
    BatchReads(
      ends.map(_.recordCount).sum,
      stats.map(_.bytes).sum,
      stats.map(_.getRecordsCalls).sum,
      stats.map(_.throttledCalls).sum)
  }
}

/** Kinesis' MillisBehindLatest over the shards a batch read, when their tasks stopped. */
final case class Lag(avgMs: Long, maxMs: Long, minMs: Long)

/** What a batch's tasks read of some shards (Kinesis records, a KPL aggregate counting once) and the calls it took. */
final case class BatchReads(records: Long, bytes: Long, getRecordsCalls: Long, throttledCalls: Long)

/** A task metric Spark sums over a batch's tasks; subclasses have no-argument constructors, as the UI needs. */
abstract class KinesisSumMetric(metricName: String, text: String) extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

final class RecordsReadMetric extends KinesisSumMetric(TaskMetrics.RecordsRead, "Kinesis records read")
final class BytesReadMetric extends KinesisSumMetric(TaskMetrics.BytesRead, "Kinesis bytes read")
final class GetRecordsCallsMetric extends KinesisSumMetric(TaskMetrics.GetRecordsCalls, "GetRecords calls")
final class ThrottledCallsMetric extends KinesisSumMetric(TaskMetrics.ThrottledCalls, "GetRecords calls throttled")
