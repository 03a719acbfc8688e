package org.apache.spark.sparkkinesis

import scala.util.control.NonFatal

import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.scheduler.ExecutorCacheTaskLocation
import org.slf4j.LoggerFactory

/**
 * The cluster's executors as task locations, sorted, for partitions that prefer an executor (Spark's Kafka source keeps
 * a partition's cached consumer on one executor the same way). It lives in Spark's package because the block manager's
 * view of the executors is not public API. Empty in local mode, which has no executor but the driver, and where a Spark
 * version no longer offers that view: tasks then prefer no executor, which costs speed, never records.
 */
object ExecutorLocations {
  private val log = LoggerFactory.getLogger(getClass)
  @volatile private var warned = false

  def sorted(): IndexedSeq[String] =
    try Option(SparkEnv.get).map { env =>
        val blockManager = env.blockManager
        blockManager.master.getPeers(blockManager.blockManagerId)
          .filterNot(_.executorId == SparkContext.DRIVER_IDENTIFIER)
          .map(id => (id.host, id.executorId))
          .sorted
          .map { case (host, executorId) => ExecutorCacheTaskLocation(host, executorId).toString }
          .toIndexedSeq
      }.getOrElse(IndexedSeq.empty)
    catch {
      case e @ (_: LinkageError | NonFatal(_)) =>
        if (!warned) {
          warned = true
          log.warn(s"Cannot list this Spark's executors ($e): enhanced fan-out tasks prefer no executor, so a shard " +
            "that moves between executors subscribes anew there.")
        }
        IndexedSeq.empty
    }
}
