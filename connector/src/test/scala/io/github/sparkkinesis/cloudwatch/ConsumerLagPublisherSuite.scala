package io.github.sparkkinesis.cloudwatch

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{ManualClock, StreamRef}
import io.github.sparkkinesis.options.CloudWatchSettings

/**
 * The consumer lag published to CloudWatch: one call per stream per minute, all its metrics in it, failures tolerated.
 */
class ConsumerLagPublisherSuite extends AnyFunSuite with Matchers {

  private val Minute = ConsumerLagPublisher.IntervalMs
  private val settings =
    CloudWatchSettings("SparkKinesis", Seq("StreamName" -> "{stream}", "Application" -> "{app}"), None, None)

  private final class Harness(
      streams: Seq[String] = Seq("orders"),
      dimensions: Seq[(String, String)] = settings.dimensions,
      open: FakeMetricsClient => MetricsClient = identity) {
    val clock = new ManualClock()
    val cloudWatch = new FakeMetricsClient
    val warnings: mutable.Buffer[String] = mutable.Buffer.empty
    var opened = 0
    val publisher = new ConsumerLagPublisher(
      settings.copy(dimensions = dimensions),
      streams,
      () => { opened += 1; open(cloudWatch) },
      () => Map("{app}" -> "orders-etl"),
      Seq("s3cr3t-key"),
      "The credentials came from the AWS default credentials chain.",
      clock,
      new DirectExecutor,
      warnings += _)
    private var batch = 0L

    /** A batch whose metrics give each stream `lag` ms (max; avg half of it) and `records` records of 10 bytes. */
    def runBatch(lag: Long, records: Long, streams: Seq[String] = streams): Unit = {
      batch += 1
      publisher.afterBatch(batch, batchMetrics(streams, lag, records))
    }

    def callsOf(stream: String): Seq[Seq[Datum]] =
      cloudWatch.calls.map(_._2).filter(_.head.dimensions.contains("StreamName" -> stream)).toSeq
  }

  /** What [[io.github.sparkkinesis.source.SourceMetrics.ofBatch]] reports for such a batch, per stream (by name). */
  private def batchMetrics(streams: Seq[String], lag: Long, records: Long): Map[String, String] =
    streams.map(StreamRef.nameOf).flatMap { s =>
      Seq(
        "maxMsBehindLatest" -> lag,
        "avgMsBehindLatest" -> lag / 2,
        "minMsBehindLatest" -> 0L,
        "recordsRead" -> records,
        "bytesRead" -> records * 10,
        "getRecordsCalls" -> 2L,
        "throttledCalls" -> 0L).map { case (k, v) => s"stream.$s.$k" -> v.toString }
    }.toMap

  test("given a batch every 10 s for 3 minutes on two streams, then each stream gets one PutMetricData per minute, " +
    "the first at the first batch") {
    val h = new Harness(streams = Seq("orders", "arn:aws:kinesis:us-east-1:123456789012:stream/payments"))
    val callTimes = mutable.Map.empty[String, mutable.Buffer[Long]]
    (0 until 18).foreach { _ =>
      val before = h.cloudWatch.calls.size
      h.runBatch(lag = 100, records = 5)
      h.cloudWatch.calls.drop(before).foreach { case (_, data) =>
        val stream = data.head.dimensions.toMap.apply("StreamName")
        callTimes.getOrElseUpdate(stream, mutable.Buffer.empty) += data.head.timestampMs
      }
      h.clock.advance(10000)
    }
    callTimes.keySet shouldBe Set("orders", "payments")
    callTimes.values.foreach { times =>
      times.map(_ - times.head) shouldBe Seq(0L, Minute, 2 * Minute)
    }
  }

  test("given the batches of a minute, then the stream's one call holds every metric as statistics over them, with " +
    "the namespace, the dimensions filled in and CloudWatch's units") {
    val h = new Harness()
    h.runBatch(lag = 0, records = 1) // the first batch is published at once
    (1 to 6).foreach { i =>
      h.clock.advance(10000)
      h.runBatch(lag = i * 1000L, records = i.toLong)
    }
    h.cloudWatch.calls should have size 2
    val (namespace, data) = h.cloudWatch.calls.last
    namespace shouldBe "SparkKinesis"
    data.map(d => d.name -> d.unit) shouldBe Seq(
      "MaxMillisBehindLatest" -> "Milliseconds",
      "AvgMillisBehindLatest" -> "Milliseconds",
      "RecordsRead" -> "Count",
      "BytesRead" -> "Bytes",
      "GetRecordsCalls" -> "Count",
      "ThrottledCalls" -> "Count")
    val byName = data.map(d => d.name -> d.stats).toMap
    byName("MaxMillisBehindLatest") shouldBe Stats(6, 21000, 1000, 6000)
    byName("AvgMillisBehindLatest") shouldBe Stats(6, 10500, 500, 3000)
    byName("RecordsRead") shouldBe Stats(6, 21, 1, 6)
    byName("BytesRead").sum shouldBe 210
    data.foreach { d =>
      d.dimensions shouldBe Seq("StreamName" -> "orders", "Application" -> "orders-etl")
      d.timestampMs shouldBe h.clock()
    }
  }

  test("given the same batch reported again (Spark's progress after triggers that ran no batch), then it is counted " +
    "once") {
    val h = new Harness()
    h.runBatch(lag = 0, records = 1)
    h.clock.advance(30000)
    h.runBatch(lag = 500, records = 3)
    h.clock.advance(Minute)
    h.publisher.afterBatch(2, batchMetrics(Seq("orders"), 500, 3)) // batch 2 again, a minute later
    h.cloudWatch.calls should have size 1
    h.runBatch(lag = 700, records = 4)
    h.cloudWatch.calls.last._2.find(_.name == "RecordsRead").get.stats shouldBe Stats(2, 7, 3, 4)
  }

  test("given a batch that read none of a stream's shards, then its lag is not made up, and its counts still count") {
    val h = new Harness()
    h.publisher.afterBatch(1, Map("stream.orders.recordsRead" -> "0", "stream.orders.bytesRead" -> "0"))
    h.cloudWatch.calls.head._2.map(_.name) shouldBe Seq("RecordsRead", "BytesRead")
  }

  test("given a query id Spark could not tell, then the dimension says unknown rather than an empty value") {
    val h = new Harness(dimensions = Seq("Query" -> "{queryId}", "Stream" -> "{stream}"))
    h.runBatch(lag = 0, records = 1)
    h.cloudWatch.calls.head._2.head.dimensions shouldBe Seq("Query" -> "unknown", "Stream" -> "orders")
  }

  test("given CloudWatch failing every call, then no batch fails, a warning comes at most once a minute without the " +
    "secret, and publishing resumes when CloudWatch answers again") {
    val h = new Harness(streams = Seq("a", "b"))
    h.cloudWatch.failing = Some(new RuntimeException("connection refused; key s3cr3t-key"))
    (0 until 18).foreach { _ =>
      h.runBatch(lag = 1, records = 1)
      h.clock.advance(10000)
    }
    h.cloudWatch.attempts shouldBe 6 // two streams, three minutes
    h.warnings should have size 3
    h.warnings.foreach { w =>
      w should include("namespace 'SparkKinesis' failed")
      w should include("connection refused")
      w should include("kinesis.emitConsumerLagMetrics")
      w should not include "s3cr3t-key"
    }
    h.warnings(1) should include("(1 more failed since the last warning)")
    h.cloudWatch.failing = None
    h.runBatch(lag = 1, records = 1)
    h.cloudWatch.calls.map(_._2.head.dimensions.toMap.apply("StreamName")) shouldBe Seq("a", "b")
  }

  test("given an identity without cloudwatch:PutMetricData, then one warning says what to grant, and publication " +
    "is tried again each minute") {
    val h = new Harness()
    h.cloudWatch.failing = Some(new PublishDenied("AccessDenied: User is not authorized to perform " +
      "cloudwatch:PutMetricData"))
    (0 until 30).foreach { _ =>
      h.runBatch(lag = 1, records = 1)
      h.clock.advance(10000)
    }
    h.cloudWatch.attempts shouldBe 5
    h.warnings should have size 1
    h.warnings.head should include("needs permission cloudwatch:PutMetricData (namespace 'SparkKinesis')")
    h.warnings.head should include("The credentials came from the AWS default credentials chain.")
    h.warnings.head should include("AccessDenied")
  }

  test("given a client that cannot be built (no region, say), then the failure is a warning, and it is built again " +
    "the next minute") {
    val h = new Harness(open = c =>
      if (c.attempts == 0 && c.calls.isEmpty) {
        c.attempts += 1
        throw new IllegalStateException("No AWS region is configured")
      } else c)
    h.runBatch(lag = 1, records = 1)
    h.warnings.head should include("No AWS region is configured")
    h.clock.advance(Minute)
    h.runBatch(lag = 1, records = 1)
    h.opened shouldBe 2
    h.cloudWatch.calls should have size 1
  }

  test("given the query stopped, then the client is closed and later batches publish nothing") {
    val h = new Harness()
    h.runBatch(lag = 1, records = 1)
    h.publisher.stop()
    h.cloudWatch.closed shouldBe true
    h.clock.advance(Minute)
    h.runBatch(lag = 1, records = 1)
    h.cloudWatch.calls should have size 1
  }
}
