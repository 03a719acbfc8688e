package io.github.sparkkinesis.it

import java.util.concurrent.{ConcurrentLinkedQueue, TimeUnit}

import scala.collection.JavaConverters._
import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.it.SinkHarness._

/**
 * The endpoint goes away in the middle of a write: the task fails naming the stream, Spark's retry writes it all; and
 * while it is away, the executor holds no more unconfirmed rows than its cap.
 */
class SinkOutageSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {
  import SparkHarness.session.implicits._

  test("the endpoint stopped mid-write fails the task; the retry completes and no row is missing") {
    // Given a proxy in front of the emulator's TLS port, and a stream
    val stream = TestStreams.createStream("sink-outage", 4)
    val proxy = new TcpProxy(tlsPort)
    proxy.start()
    val failures = new ConcurrentLinkedQueue[String]()
    val listener = new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
        if (!end.taskInfo.successful) failures.add(end.reason.toString)
    }
    spark.sparkContext.addSparkListener(listener)
    try {
      // When a 6,000-row write pauses after row 1,000 of its first task, the endpoint stops, and the write goes on
      val gate = RowGate.pausingAt(1000L)
      val df = spark.range(0, 6000, 1, 2).select(
        concat(lit("outage-"), gate.udf($"id").cast("string")).as("data"),
        concat(lit("key-"), ($"id" % 97).cast("string")).as("partitionKey"))
      val options = sinkOptions(
        Some(stream),
        "kinesis.endpointUrl" -> s"https://127.0.0.1:${proxy.port}",
        "kinesis.sink.recordTtl" -> "2000")
      val write = Future(df.write.format("aws-kinesis").options(options).mode("append").save())
      gate.reached.await(60, TimeUnit.SECONDS) shouldBe true
      proxy.stop()
      gate.release.countDown()
      // Then a task fails, saying the rows expired on their way to the stream
      Eventually.await(
        "a write task to fail while the endpoint is down",
        60.seconds,
        s"task failures so far: ${failures.asScala.mkString(" | ")}") {
        !failures.isEmpty
      }
      // And once the endpoint is back, Spark's retry completes the write
      proxy.start()
      Await.result(write, 120.seconds)
      failures.asScala.head should (include(s"'$stream'") and include("kinesis.sink.recordTtl"))
      // And every row is in the stream; rows of the failed attempt that got through may be there twice
      val landed = keyed(readBack(stream)._1)
      val expected = (0 until 6000).map(i => (s"key-${i % 97}", s"outage-$i"))
      expected.toSet.diff(landed.toSet) shouldBe empty
      landed.toSet.diff(expected.toSet) shouldBe empty
      info(s"${landed.size - expected.size} duplicate rows from the failed attempt; ${failures.size} task failure(s)")
    } finally {
      spark.sparkContext.removeSparkListener(listener)
      proxy.close()
    }
  }

  /** Threads waiting for room in an executor's cap on unconfirmed rows (the sink's PendingLimit). */
  private def waitingForExecutorRoom: Int = Thread.getAllStackTraces.asScala.values.count(_.exists(frame =>
    frame.getClassName.endsWith("sink.PendingLimit") && frame.getMethodName == "tryAcquire"))

  test("Given the endpoint down, when tasks keep writing, then the executor holds at most " +
    "kinesis.sink.maxPendingRecordsPerExecutor rows unconfirmed, and the write completes once it is back") {
    // Given a proxy in front of the emulator's TLS port, a stream, and a write of 2 tasks that pause at their
    // first row (the stream was already checked when the write was analysed)
    val stream = TestStreams.createStream("sink-capped", 2)
    val proxy = new TcpProxy(tlsPort)
    proxy.start()
    try {
      val cap = 300
      val gate = RowGate.pausingAt(0L, 2500L)
      val df = spark.range(0, 5000, 1, 2).select(
        concat(lit("capped-"), gate.udf($"id").cast("string")).as("data"),
        concat(lit("key-"), ($"id" % 97).cast("string")).as("partitionKey"))
      val options = sinkOptions(
        Some(stream),
        "kinesis.endpointUrl" -> s"https://127.0.0.1:${proxy.port}",
        "kinesis.sink.maxPendingRecordsPerExecutor" -> cap.toString,
        "kinesis.sink.recordTtl" -> "120000")
      val write = Future(df.write.format("aws-kinesis").options(options).mode("append").save())
      gate.reached.await(60, TimeUnit.SECONDS) shouldBe true
      // When the endpoint stops before any row is handed over, and the tasks go on
      proxy.stop()
      gate.release.countDown()
      // Then both tasks come to wait for room in the executor's cap, having handed over no more than it
      Eventually.await(
        "both write tasks to wait for room in the executor's cap",
        60.seconds,
        s"rows through the gate: ${gate.passed}, threads waiting: $waitingForExecutorRoom") {
        waitingForExecutorRoom == 2
      }
      // (each task holds one row it has not handed over yet)
      gate.passed should (be >= cap.toLong and be <= cap + 2L)
      // And once the endpoint is back, the write completes with every row in the stream
      proxy.start()
      Await.result(write, 180.seconds)
      val landed = keyed(readBack(stream)._1)
      landed.toSet shouldBe (0 until 5000).map(i => (s"key-${i % 97}", s"capped-$i")).toSet
    } finally proxy.close()
  }
}
