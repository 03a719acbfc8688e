package io.github.sparkkinesis.bench

import scala.collection.JavaConverters._

import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryProgress}

/** Where a query's micro-batches spent their time, from Spark's own progress reports. */
final case class Progress(batches: Int, averageMs: Seq[(String, Long)]) {

  override def toString: String =
    if (batches == 0) "no batch with data reported"
    else s"mean of $batches batch(es) with data, ms: " + averageMs.map { case (k, v) => s"$k $v" }.mkString(", ")
}

object Progress {

  /** The phases in the order a micro-batch runs them; triggerExecution is the whole batch. */
  private val Phases =
    Seq("triggerExecution", "latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets")

  /** Averages the phase durations of the batches that read records (idle reports have no batch to time). */
  def of(query: StreamingQuery): Progress = summarize(query.recentProgress.toSeq.filter(_.numInputRows > 0))

  def summarize(reports: Seq[StreamingQueryProgress]): Progress = {
    val averages = Phases.flatMap { phase =>
      val values = reports.flatMap(r => Option(r.durationMs.asScala.getOrElse(phase, null)).map(_.longValue))
      if (values.isEmpty) None else Some(phase -> values.sum / values.size)
    }
    Progress(reports.size, averages)
  }
}
