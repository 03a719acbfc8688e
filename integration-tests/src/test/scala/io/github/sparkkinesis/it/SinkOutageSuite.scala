package io.github.sparkkinesis.it

import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean

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
 * Pauses a write in the middle of a task's rows, so the test can take the endpoint down exactly then; used from a
 * UDF, which runs in this JVM in local mode. Only the first attempt pauses: Spark's retry runs straight through.
 */
object WriteGate {
  val reached = new CountDownLatch(1)
  val release = new CountDownLatch(1)
  private val paused = new AtomicBoolean(false)

  def pass(id: Long, pauseAt: Long): Long = {
    if (id == pauseAt && paused.compareAndSet(false, true)) {
      reached.countDown()
      release.await(60, TimeUnit.SECONDS)
    }
    id
  }
}

/** The endpoint goes away in the middle of a write: the task fails naming the stream, Spark's retry writes it all. */
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
      val pass = udf((id: Long) => WriteGate.pass(id, pauseAt = 1000L))
      val df = spark.range(0, 6000, 1, 2).select(
        concat(lit("outage-"), pass($"id").cast("string")).as("data"),
        concat(lit("key-"), ($"id" % 97).cast("string")).as("partitionKey"))
      val options = sinkOptions(Some(stream),
        "kinesis.endpointUrl" -> s"https://127.0.0.1:${proxy.port}", "kinesis.sink.recordTtl" -> "2000")
      val write = Future(df.write.format("aws-kinesis").options(options).mode("append").save())
      WriteGate.reached.await(60, TimeUnit.SECONDS) shouldBe true
      proxy.stop()
      WriteGate.release.countDown()
      // Then a task fails, saying the rows expired on their way to the stream
      Eventually.await("a write task to fail while the endpoint is down", 60.seconds,
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
}
