package io.github.sparkkinesis.metrics

import java.util.UUID

import scala.util.Try

import org.apache.spark.sql.SparkSession

import io.github.sparkkinesis.client.StreamRef

/**
 * The names of the connector's metrics sources: `kinesis.<query>.<stream>.<kind>`, one per query, stream and kind
 * ([[MetricNames.Batches]] on the driver, [[MetricNames.Reads]] and [[MetricNames.Writes]] where tasks run). Query and
 * stream are reduced to letters, digits and `_`, so that a name is one component of Spark's dotted metric names (JMX,
 * Graphite) and a valid Prometheus name once Spark's servlet has replaced the dots.
 */
private[sparkkinesis] object MetricNames {

  /** The source of the driver's metrics, from the shard-end records of the batches the query ran. */
  val Batches = "batches"

  /** The source of the readers' metrics, on each executor that ran a task of the query. */
  val Reads = "reads"

  /** The source of the sink's metrics, on each executor that ran a write task of the query. */
  val Writes = "writes"

  /** The query label of reads and writes outside a streaming query (`spark.read`, `df.write`). */
  val BatchQuery = "batch"

  /** `raw` with every character but letters, digits and `_` replaced by `_` (`_` alone for an empty string). */
  def sanitise(raw: String): String = if (raw.isEmpty) "_" else raw.replaceAll("[^A-Za-z0-9_]", "_")

  /** The source of `kind` for `query` and `stream` (a name or an ARN, which counts by its stream's name). */
  def source(query: String, stream: String, kind: String): String =
    s"${queryPrefix(query)}${sanitise(StreamRef.nameOf(stream))}.$kind"

  /** What every source of `query` starts with. */
  def queryPrefix(query: String): String = s"kinesis.${sanitise(query)}."

  /**
   * The streaming query the calling thread runs (Spark sets its id on the query's thread while it plans): its name if
   * it has one, else its id; [[BatchQuery]] outside a streaming query, or without a Spark session.
   */
  def currentQuery(): String = Try {
    val sessions = (SparkSession.getActiveSession.toSeq ++ SparkSession.getDefaultSession.toSeq).distinct
    sessions.iterator.flatMap(s => Option(s.sparkContext.getLocalProperty(QueryIdProperty))).toSeq.headOption.map {
      id =>
        val named =
          sessions.iterator.flatMap(s => Option(s.streams.get(UUID.fromString(id)))).flatMap(q => Option(q.name))
        named.toSeq.headOption.getOrElse(id)
    }.getOrElse(BatchQuery)
  }.getOrElse(BatchQuery)

  /** The local property in which Spark's streaming execution names the query its thread runs. */
  private val QueryIdProperty = "sql.streaming.queryId"
}
