package io.github.sparkkinesis.metrics

import java.util.concurrent.ConcurrentHashMap

import com.codahale.metrics.MetricRegistry
import org.apache.spark.sparkkinesis.SparkMetricsSources

import io.github.sparkkinesis.client.IdleSweeper
import io.github.sparkkinesis.compat.JavaCollections._

/**
 * This JVM's [[MetricsGroup]]s by source name, each registered with Spark's metrics system (`register`, which returns
 * what unregisters it) when first asked for. An executor never learns that a query has stopped, so a group that can be
 * evicted is unregistered after `idleMs` without counting ([[evictIdle]]), and registers itself again if it counts once
 * more; the driver unregisters a query's groups when the query stops ([[releaseQuery]]).
 */
private[sparkkinesis] final class MetricsGroups(
    register: (String, MetricRegistry) => Option[() => Unit],
    idleMs: Long) {

  private val groups = new ConcurrentHashMap[String, MetricsGroup]()
  private val registrations = new ConcurrentHashMap[MetricsGroup, () => Unit]()

  /** The group named `sourceName`, created by `create` and registered if there is none. */
  def get[G <: MetricsGroup](sourceName: String)(create: String => G): G = {
    val group = groups.computeIfAbsent(
      sourceName,
      new java.util.function.Function[String, MetricsGroup] {
        override def apply(name: String): MetricsGroup = {
          val created = create(name)
          require(created.sourceName == name, s"the group for $name is named ${created.sourceName}")
          registerNow(created)
          created
        }
      })
    group.used()
    group.asInstanceOf[G]
  }

  /** The source names registered now, sorted. */
  def registered: Seq[String] =
    groups.keySet().asScala.toSeq.filter(n => registrations.containsKey(groups.get(n))).sorted

  /** The source names of the groups held now (registered or not, when Spark has no metrics system), sorted. */
  def names: Seq[String] = groups.keySet().asScala.toSeq.sorted

  /**
   * Unregisters every group of `query` (its name or id as given to [[MetricNames.source]]); one that counts again
   * afterwards (a task that outlived the query) registers again, and is evicted once idle.
   */
  def releaseQuery(query: String): Unit = {
    val prefix = MetricNames.queryPrefix(query)
    groups.asScala.toSeq.filter(_._1.startsWith(prefix)).foreach { case (name, group) => remove(name, group) }
  }

  /** Unregisters the evictable groups that have not counted for `idleMs`; they register again if they count. */
  def evictIdle(): Unit = groups.asScala.toSeq.foreach { case (name, group) =>
    if (group.evictable && group.idleMs >= idleMs) remove(name, group)
  }

  /** A group removed that counts again (a task that outlived its query, say) is registered again. */
  private def remove(name: String, group: MetricsGroup): Unit = if (groups.remove(name, group)) {
    group.revive = Some(reviveGroup)
    Option(registrations.remove(group)).foreach(unregister => unregister())
  }

  /** A group that counts after its eviction takes its name back, unless a new group took it meanwhile. */
  private val reviveGroup: MetricsGroup => Unit = group =>
    if (groups.putIfAbsent(group.sourceName, group) == null) {
      group.revive = None
      registerNow(group)
    } else group.revive = None

  private def registerNow(group: MetricsGroup): Unit =
    register(group.sourceName, group.registry).foreach(unregister => registrations.put(group, unregister))
}

private[sparkkinesis] object MetricsGroups {

  /** The JVM's groups, registered with Spark's metrics system; idle ones are unregistered after 10 minutes. */
  lazy val shared: MetricsGroups = {
    val groups = new MetricsGroups(SparkMetricsSources.register, IdleSweeper.IdleMs)
    IdleSweeper.start("spark-kinesis-idle-metrics")(() => groups.evictIdle())
    groups
  }
}
