package io.github.sparkkinesis.it

import java.io.File
import java.net.{HttpURLConnection, URL}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.TimeUnit

import scala.concurrent.duration._
import scala.io.Source

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * The connector's metrics as an operator's Prometheus scrapes them from the driver's `/metrics/prometheus` (Spark's
 * PrometheusServlet, configured as docs/monitoring.md says), from a query in a child JVM that reads one stream into
 * another. In local mode the executor is the driver's JVM, so the readers' and the sink's sources appear there too,
 * under executor id `driver`; on a cluster each executor's metrics system has its own.
 */
class PrometheusMetricsSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /** A child JVM starts Spark in 10-20 s on two busy cores. */
  private val ChildTimeout = 120.seconds

  /** The sample values of Spark's Prometheus text format, by metric name (with its labels). */
  private def scrape(port: Int): Map[String, String] = {
    val connection = new URL(s"http://127.0.0.1:$port/metrics/prometheus").openConnection()
      .asInstanceOf[HttpURLConnection]
    connection.setConnectTimeout(5000)
    connection.setReadTimeout(5000)
    try {
      connection.getResponseCode shouldBe 200
      val body = Source.fromInputStream(connection.getInputStream, UTF_8.name).mkString
      body.linesIterator.filterNot(_.startsWith("#")).map(_.trim).filter(_.nonEmpty).map { line =>
        val split = line.lastIndexOf(' ')
        line.substring(0, split) -> line.substring(split + 1)
      }.toMap
    } finally connection.disconnect()
  }

  private def counter(metrics: Map[String, String], name: String): Option[Long] =
    metrics.get(s"""metrics_${name}_Count{type="counters"}""").map(_.toLong)

  private def gauge(metrics: Map[String, String], name: String): Option[Long] =
    metrics.get(s"""metrics_${name}_Value{type="gauges"}""").map(_.toLong)

  test("a running query's source and sink metrics are scraped from the driver, move as records are read and " +
    "written, and are gone once the query stops") {
    val source = TestStreams.createStream("it-prom-in", shards = 2)
    val sink = TestStreams.createStream("it-prom-out", shards = 1)
    val port = EmulatorScript.freeLoopbackPort()
    val log = new File(newDir("child"), "metrics.log")
    val child = ChildJvm.start(MetricsDriver, log, source, sink, newCheckpointDir(), port.toString)
    try {
      Eventually.await("the child's query to start", ChildTimeout, ChildJvm.tail(log), every = 200.millis) {
        if (!child.isAlive) Eventually.giveUp(s"the child exited with ${child.exitValue()}; ${ChildJvm.tail(log)}")
        ChildJvm.output(log).contains("MetricsDriver: started")
      }
      val in = s"it_driver_kinesis_metrics_it_${source.replace('-', '_')}"
      val out = s"it_driver_kinesis_metrics_it_${sink.replace('-', '_')}_writes"
      val puts = TestStreams.putStrings(source, TestStreams.testRecords("p", n = 40, keys = 4))
      val bytes = puts.map(_.data.length.toLong).sum

      val metrics = Eventually.awaitValue(
        "40 records read and written",
        60.seconds,
        scrape(port).toSeq.sorted
          .filter(_._1.contains("kinesis")).mkString("\n"),
        every = 500.millis) {
        // the driver counts a batch when Spark reports its progress, after the sink has written its rows
        Some(scrape(port)).filter(m =>
          counter(m, s"${out}_rowsWritten").contains(40L) && counter(m, s"${in}_batches_recordsRead").contains(40L))
      }
      counter(metrics, s"${in}_batches_bytesRead") shouldBe Some(bytes)
      counter(metrics, s"${in}_batches_batchesRead").get should be >= 1L
      counter(metrics, s"${in}_batches_getRecordsCalls").get should be >= 1L
      counter(metrics, s"${in}_batches_driverGetRecordsCalls").get should be >= 1L
      counter(metrics, s"${in}_batches_throttledCalls") shouldBe Some(0L)
      gauge(metrics, s"${in}_batches_shardsOpen") shouldBe Some(2L)
      gauge(metrics, s"${in}_batches_maxMillisBehindLatest").get should be >= 0L
      gauge(metrics, s"${in}_batches_avgMillisBehindLatest").get should be >= 0L
      counter(metrics, s"${in}_reads_recordsRead") shouldBe Some(40L) // no task was retried
      counter(metrics, s"${in}_reads_bytesRead") shouldBe Some(bytes)
      counter(metrics, s"${in}_reads_getRecordsCalls").get should be >= 1L
      counter(metrics, s"${in}_reads_subscribeToShardCalls") shouldBe Some(0L) // polling
      counter(metrics, s"${out}_rowsFailed") shouldBe Some(0L)
      gauge(metrics, s"${out}_rowsOutstanding") shouldBe Some(0L)
      gauge(metrics, "it_driver_kinesis_producers_outstandingRecords") shouldBe Some(0L)
      SinkHarness.readBack(sink)._1.size shouldBe 40

      child.getOutputStream.write("stop\n".getBytes(UTF_8))
      child.getOutputStream.flush()
      Eventually.await("the child's query to stop", 30.seconds, ChildJvm.tail(log), every = 200.millis) {
        ChildJvm.output(log).contains("MetricsDriver: stopped")
      }
      val left = scrape(port).keys.filter(_.contains("kinesis_metrics_it_"))
      withClue("the stopped query's sources are unregistered:") { left shouldBe empty }
    } finally {
      child.getOutputStream.close()
      if (!child.waitFor(60, TimeUnit.SECONDS)) child.destroyForcibly()
    }
  }
}
