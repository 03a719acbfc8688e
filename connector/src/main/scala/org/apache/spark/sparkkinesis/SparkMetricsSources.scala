package org.apache.spark.sparkkinesis

import scala.util.control.NonFatal

import com.codahale.metrics.MetricRegistry
import org.apache.spark.SparkEnv
import org.apache.spark.metrics.source.Source
import org.slf4j.LoggerFactory

/**
 * Registers metrics with this JVM's Spark metrics system (the driver's or an executor's), whose sinks (JMX, the
 * Prometheus servlet, ...) then report them as `<appId>.<executorId>.<sourceName>.<metric>`. It lives in Spark's
 * package because a metrics source is not public API. Without a running Spark (unit tests), or where a Spark version no
 * longer offers it, nothing is registered: the connector then reads and writes as before, without these metrics.
 */
object SparkMetricsSources {
  private val log = LoggerFactory.getLogger(getClass)
  @volatile private var warned = false

  /** Registers `metrics` as source `sourceName`; returns what unregisters it, or None if nothing was registered. */
  def register(sourceName: String, metrics: MetricRegistry): Option[() => Unit] =
    try Option(SparkEnv.get).map { env =>
        val source = new NamedSource(sourceName, metrics)
        env.metricsSystem.registerSource(source)
        () => env.metricsSystem.removeSource(source)
      }
    catch {
      case e @ (_: LinkageError | NonFatal(_)) =>
        if (!warned) {
          warned = true
          log.warn(s"Cannot register the Kinesis connector's metrics with this Spark's metrics system ($e): they are " +
            "missing from its sinks (JMX, Prometheus); the query's progress still reports its source's metrics.")
        }
        None
    }

  private final class NamedSource(override val sourceName: String, override val metricRegistry: MetricRegistry)
      extends Source
}
