package io.github.sparkkinesis

import java.util.concurrent.atomic.AtomicBoolean

import scala.util.Try

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.compat.SparkStartLoader

/**
 * Whether Spark's own driver threads can load the connector's classes by name. The SQL tab's listener re-creates a
 * scan's custom metrics from their class names, and the task-result getter deserializes what each task returns; both
 * use the class loader Spark started with. A Spark Connect session's artifacts (`spark.addArtifacts`, pyspark-kinesis'
 * `attach_kinesis`) live in a class loader of that session's own, a child of it, which those threads never use: the
 * connector then leaves out what they would fail to load, with one warning, rather than fail a read or a write.
 */
object SparkThreadsClassLoading {
  private val log = LoggerFactory.getLogger(getClass)
  private val warned = new AtomicBoolean(false)

  /** True when `sparkLoader` (None: no session, nothing to compare with) loads a class named as `cls` is. */
  def loads(sparkLoader: Option[ClassLoader], cls: Class[_]): Boolean =
    sparkLoader.forall(loader => Try(Class.forName(cls.getName, false, loader)).isSuccess)

  /**
   * Whether the active session's Spark threads load the connector; the first time they do not (per copy of the
   * connector's classes, so once per Connect session that added them as artifacts), it warns, naming what is left out.
   */
  def connectorLoads(): Boolean = {
    val visible = loads(SparkStartLoader.ofActiveSession(), getClass)
    if (!visible && warned.compareAndSet(false, true)) log.warn(NotLoadedWarning)
    visible
  }

  val NotLoadedWarning: String =
    "The spark-kinesis connector was added to this Spark Connect session as artifacts (spark.addArtifacts, " +
      "attach_kinesis), which Spark's own driver threads cannot load classes from. So Kinesis task metrics " +
      "(recordsRead, bytesRead, getRecordsCalls, throttledCalls) are left out of the Spark UI's SQL tab, and the " +
      "sink's row counts out of the driver's log; reads, writes and the query progress metrics are complete. To have " +
      "them too, start the Spark Connect server with the connector JARs (--jars or spark.jars)."
}
