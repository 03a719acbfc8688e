package io.github.sparkkinesis.metrics

import scala.collection.mutable

import com.codahale.metrics.{Counter, Gauge, MetricRegistry}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.ManualClock
import io.github.sparkkinesis.metadata.{ReadStats, ShardEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition

/** The connector's metrics sources: their names, their registration with Spark's metrics system, and their end. */
class MetricsGroupsSuite extends AnyFunSuite with Matchers {

  /** Spark's metrics system as the groups see it: the source names registered now, with their metrics. */
  private final class FakeMetricsSystem {
    val sources = mutable.Map.empty[String, MetricRegistry]
    def register(name: String, metrics: MetricRegistry): Option[() => Unit] = synchronized {
      require(!sources.contains(name), s"$name registered twice")
      sources(name) = metrics
      Some(() => synchronized(sources.remove(name)))
    }
    def counter(source: String, metric: String): Long = sources(source).getCounters.get(metric).getCount
    def gauge(source: String, metric: String): Any = sources(source).getGauges.get(metric).getValue
  }

  private val IdleMs = 600000L

  private def record(shard: String, batch: Long, records: Long, lagMs: Long) = ShardEndRecord(
    "orders",
    shard,
    batch,
    ShardPosition.TrimHorizon,
    ShardPosition.AfterSequenceNumber("9"),
    records,
    Some(ReadStats(lagMs, moreAvailable = false, boundReached = false, None, records * 10, 2, 1)))

  test("Given query names and streams with any characters, then each source name is kinesis.<query>.<stream>.<kind> " +
    "of letters, digits and _ only") {
    MetricNames.source("orders to S3 (v2)", "orders.eu-1", MetricNames.Reads) shouldBe
      "kinesis.orders_to_S3__v2_.orders_eu_1.reads"
    MetricNames.source(
      "c0ffee00-1234-5678-9abc-def012345678",
      "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks",
      MetricNames.Batches) shouldBe "kinesis.c0ffee00_1234_5678_9abc_def012345678.clicks.batches"
    MetricNames.source("", "s", MetricNames.Writes) shouldBe "kinesis._.s.writes"
    MetricNames.source("naïve/q", "s", MetricNames.Writes) should fullyMatch regex "[A-Za-z0-9_.]+"
  }

  test("Given no Spark session on the thread, then reads and writes count under the batch query") {
    MetricNames.currentQuery() shouldBe MetricNames.BatchQuery
  }

  test("Given the sources of two queries whose names share a prefix, when one query is released, then only its " +
    "sources are unregistered") {
    val spark = new FakeMetricsSystem
    val groups = new MetricsGroups(spark.register, IdleMs)
    Seq("q", "q2").foreach { q =>
      groups.get(MetricNames.source(q, "orders", MetricNames.Reads))(new ReadMetrics(_))
      groups.get(MetricNames.source(q, "orders", MetricNames.Batches))(new BatchMetrics(_))
    }
    spark.sources.keySet shouldBe Set(
      "kinesis.q.orders.reads",
      "kinesis.q.orders.batches",
      "kinesis.q2.orders.reads",
      "kinesis.q2.orders.batches")

    groups.releaseQuery("q")

    spark.sources.keySet shouldBe Set("kinesis.q2.orders.reads", "kinesis.q2.orders.batches")
    groups.names shouldBe Seq("kinesis.q2.orders.batches", "kinesis.q2.orders.reads")
  }

  test("Given a stopped query's stream, when it stops, then its driver's and this JVM's readers' sources are " +
    "unregistered") {
    val spark = new FakeMetricsSystem
    val groups = new MetricsGroups(spark.register, IdleMs)
    val query = new QueryMetrics("q", Seq("orders", "clicks"), groups)
    groups.get(MetricNames.source("q", "orders", MetricNames.Reads))(new ReadMetrics(_)).recordsRead.inc()
    spark.sources.keySet shouldBe Set("kinesis.q.orders.batches", "kinesis.q.clicks.batches", "kinesis.q.orders.reads")

    query.stop()

    spark.sources shouldBe empty
  }

  test("Given a readers' source idle for 10 minutes, when the sweep runs, then it is unregistered; when it counts " +
    "again, then it is registered again with its counts kept, and the driver's source stays throughout") {
    val spark = new FakeMetricsSystem
    val clock = new ManualClock()
    val groups = new MetricsGroups(spark.register, IdleMs)
    val reads = groups.get("kinesis.q.orders.reads")(new ReadMetrics(_, clock))
    groups.get("kinesis.q.orders.batches")(new BatchMetrics(_, clock))
    reads.recordsRead.inc(7)
    clock.advance(IdleMs - 1)
    groups.evictIdle()
    spark.sources.keySet shouldBe Set("kinesis.q.orders.reads", "kinesis.q.orders.batches")

    clock.advance(1)
    groups.evictIdle()
    spark.sources.keySet shouldBe Set("kinesis.q.orders.batches")

    reads.recordsRead.inc(3)
    spark.sources.keySet shouldBe Set("kinesis.q.orders.reads", "kinesis.q.orders.batches")
    spark.counter("kinesis.q.orders.reads", "recordsRead") shouldBe 10
    groups.get("kinesis.q.orders.reads")(new ReadMetrics(_, clock)) shouldBe theSameInstanceAs(reads)
  }

  test("Given a batch's metrics asked for twice (progress reported again without a new batch), then the driver " +
    "counts the batch once and its lag gauges show the latest batch that read the stream") {
    val spark = new FakeMetricsSystem
    val groups = new MetricsGroups(spark.register, IdleMs)
    val query = new QueryMetrics("q", Seq("orders"), groups)
    val first = Map("orders" -> Seq(record("s0", 1, 5, 100), record("s1", 1, 3, 300)))
    query.update(1, first, Map("orders" -> (2, 0)), Map("orders" -> 4L))
    query.update(1, first, Map("orders" -> (2, 0)), Map("orders" -> 4L))
    val source = "kinesis.q.orders.batches"
    spark.counter(source, "recordsRead") shouldBe 8
    spark.counter(source, "bytesRead") shouldBe 80
    spark.counter(source, "getRecordsCalls") shouldBe 4
    spark.counter(source, "throttledCalls") shouldBe 2
    spark.counter(source, "batchesRead") shouldBe 1
    spark.counter(source, "driverGetRecordsCalls") shouldBe 4
    spark.gauge(source, "maxMillisBehindLatest") shouldBe 300L
    spark.gauge(source, "avgMillisBehindLatest") shouldBe 200L
    spark.gauge(source, "shardsOpen") shouldBe 2L

    query.update(2, Map.empty, Map("orders" -> (1, 2)), Map("orders" -> 6L))

    spark.counter(source, "recordsRead") shouldBe 8
    spark.counter(source, "driverGetRecordsCalls") shouldBe 6
    spark.gauge(source, "maxMillisBehindLatest") shouldBe 300L
    spark.gauge(source, "shardsClosed") shouldBe 2L
  }

  test("Given Spark without a metrics system (no SparkEnv), then groups count without being registered") {
    val groups = new MetricsGroups((_, _) => None, IdleMs)
    val reads = groups.get("kinesis.q.orders.reads")(new ReadMetrics(_))
    reads.recordsRead.inc(2)
    reads.recordsRead.getCount shouldBe 2
    groups.registered shouldBe empty
    groups.names shouldBe Seq("kinesis.q.orders.reads")
  }

  /** A source's counters and gauges, as Spark's sinks report them. */
  private def kinds(registry: MetricRegistry): (Int, Int) = (registry.getCounters.size, registry.getGauges.size)

  test("Given each kind of source, then it declares its counters and gauges before registration") {
    kinds(new ReadMetrics("r").registry) shouldBe (8, 0)
    kinds(new WriteMetrics("w").registry) shouldBe (4, 1)
    kinds(new BatchMetrics("b").registry) shouldBe (6, 4)
    (new ProducerMetrics("p", () => 42L).registry.getGauges.get("outstandingRecords"): Gauge[_]).getValue shouldBe 42L
    (new ReadMetrics("r").recordsRead: Counter).getCount shouldBe 0
  }
}
