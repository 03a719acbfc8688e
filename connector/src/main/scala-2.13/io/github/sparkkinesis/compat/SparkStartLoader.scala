package io.github.sparkkinesis.compat

import org.apache.spark.sql.classic.SparkSession

/** The class loader Spark's driver threads started with (Spark 4; the 2.12 twin of this file reads Spark 3.5's). */
object SparkStartLoader {

  /**
   * The parent of the session's shared JAR class loader, which Spark built over the loader it started with: the one its
   * listener and task-result threads use. None when no session is active, or its SparkContext has stopped (its shared
   * state can no longer be built).
   */
  def ofActiveSession(): Option[ClassLoader] =
    SparkSession.getActiveSession
      .orElse(SparkSession.getDefaultSession)
      .filterNot(_.sparkContext.isStopped)
      .map(_.sharedState.jarClassLoader.getParent)
}
