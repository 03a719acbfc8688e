package org.apache.spark.sparkkinesis

import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.scheduler.ExecutorCacheTaskLocation

/**
 * The cluster's executors as task locations, sorted, for partitions that prefer an executor (Spark's Kafka source
 * keeps a partition's cached consumer on one executor the same way). It lives in Spark's package because the block
 * manager's view of the executors is not public API. Empty in local mode, which has no executor but the driver.
 */
object ExecutorLocations {
  def sorted(): IndexedSeq[String] = Option(SparkEnv.get).map { env =>
    val blockManager = env.blockManager
    blockManager.master.getPeers(blockManager.blockManagerId)
      .filterNot(_.executorId == SparkContext.DRIVER_IDENTIFIER)
      .map(id => (id.host, id.executorId))
      .sorted
      .map { case (host, executorId) => ExecutorCacheTaskLocation(host, executorId).toString }
      .toIndexedSeq
  }.getOrElse(IndexedSeq.empty)
}
