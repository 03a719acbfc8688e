package io.github.sparkkinesis.metrics

import com.codahale.metrics.{Counter, Gauge, MetricRegistry}

/**
 * Metrics registered together as one Spark metrics source named `sourceName` ([[MetricNames]]); subclasses declare them
 * in their constructors, since Spark takes a source's metrics when it registers it. Each count marks the group used,
 * and a group the [[MetricsGroups]] unregistered for being idle registers itself again when it counts, with its counts
 * as they were.
 */
private[sparkkinesis] abstract class MetricsGroup(val sourceName: String, clock: () => Long) {
  private[metrics] val registry = new MetricRegistry
  @volatile private var lastUsedMs = clock()

  /** Set by the [[MetricsGroups]] that unregistered this group for being idle: counting registers it again. */
  @volatile private[metrics] var revive: Option[MetricsGroup => Unit] = None

  /** Whether an idle group may be unregistered; a group that its owner unregisters itself is not. */
  def evictable: Boolean = true

  /** A counter that marks the group used whenever it counts. */
  protected def counter(name: String): Counter = registry.register(
    name,
    new Counter {
      override def inc(n: Long): Unit = {
        super.inc(n)
        used()
      }
    })

  protected def gauge(name: String)(value: => Long): Unit =
    registry.register(name, new Gauge[Long] { override def getValue: Long = value })

  /** How long the group has gone without counting (or being handed out). */
  def idleMs: Long = clock() - lastUsedMs

  private[metrics] def used(): Unit = {
    lastUsedMs = clock()
    revive.foreach(r => r(this))
  }
}
