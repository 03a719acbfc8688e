package org.apache.spark.sparkkinesis

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.execution.streaming.runtime.StreamingQueryWrapper
import org.apache.spark.sql.internal.SQLConf
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.source.realtime.BatchSlots

/**
 * The slots of the real-time batch being planned: the tasks the cluster runs at once for the default resource profile
 * (cores over `spark.task.cpus`, as Spark's scheduler counts them when it admits the batch), and the shuffles of the
 * batch's plan, whose stages run beside the source's tasks. It lives in Spark's package because the slot count is not
 * public API.
 *
 * Spark plans a real-time batch's input while it prepares the batch's physical plan, before the shuffles are in it, so
 * they are counted from the batch's optimized logical plan (the query's `lastExecution`, found by the query id Spark
 * sets on the planning thread): one shuffle of `spark.sql.shuffle.partitions` partitions (as the checkpoint fixed them)
 * per stateful operator (aggregation, deduplication, `flatMapGroupsWithState`, `transformWithState`), two per
 * stream-stream join, one partition for an aggregation without keys, and a repartition's own count. Operators that
 * share a shuffle (a deduplication by the keys an aggregation was grouped by) are counted each: an upper bound.
 */
object RealTimeBatchSlots {
  private val log = LoggerFactory.getLogger(getClass)
  @volatile private var warned = false

  def of(sc: SparkContext): BatchSlots =
    BatchSlots(
      sc.maxNumConcurrentTasks(sc.resourceProfileManager.defaultResourceProfile),
      // only names the setting in messages: the slot count divides by it already (Spark 4.3 accepts fractions, so
      // its resource profile's accessor changed type between releases)
      sc.conf.get("spark.task.cpus", "1"),
      shuffles(sc))

  /** Each shuffle's partitions, by the rule above, in `plan`, for state of `partitions` partitions. */
  def shuffles(plan: LogicalPlan, partitions: Int): Seq[Int] = plan.collect {
    case a: Aggregate if a.isStreaming => if (a.groupingExpressions.isEmpty) Seq(1) else Seq(partitions)
    case d: Deduplicate if d.isStreaming => Seq(partitions)
    case d: DeduplicateWithinWatermark if d.isStreaming => Seq(partitions)
    case f: FlatMapGroupsWithState if f.isStreaming => Seq(partitions)
    case t: TransformWithState if t.isStreaming => Seq(partitions)
    case j: Join if j.left.isStreaming && j.right.isStreaming => Seq(partitions, partitions)
    case r: RepartitionOperation if r.isStreaming && r.shuffle => Seq(r.numPartitions)
  }.flatten

  private def shuffles(sc: SparkContext): Seq[Int] =
    try {
      val id = Option(sc.getLocalProperty("sql.streaming.queryId")).map(UUID.fromString)
      val sessions = (SparkSession.getActiveSession.toSeq ++ SparkSession.getDefaultSession.toSeq).distinct
      val query = id.flatMap(i => sessions.iterator.flatMap(s => Option(s.streams.get(i))).nextOption())
      query.collect { case w: StreamingQueryWrapper => w.streamingQuery.lastExecution }.flatMap(Option(_)) match {
        case Some(batch) => shuffles(batch.optimizedPlan, SQLConf.get.numShufflePartitions)
        case None => unknown(s"query ${id.getOrElse("<no id on this thread>")} not found in the session")
      }
    } catch {
      case e @ (_: LinkageError | NonFatal(_)) => unknown(e.toString)
    }

  private def unknown(why: String): Seq[Int] = {
    if (!warned) {
      warned = true
      log.warn(s"Cannot see the shuffles of the real-time batch being planned ($why): its Kinesis tasks take every " +
        "task slot, so a query with shuffle stages may be refused for slots; set kinesis.realTime.maxTasks.")
    }
    Nil
  }
}
