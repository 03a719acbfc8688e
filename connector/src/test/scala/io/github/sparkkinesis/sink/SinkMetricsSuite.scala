package io.github.sparkkinesis.sink

import java.net.URI

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{ClientSettings, RetrySettings}
import io.github.sparkkinesis.metrics.WriteMetrics

/** What a write task counts in its executor's metrics, per stream: rows written, failed, retried and outstanding. */
class SinkMetricsSuite extends AnyFunSuite with Matchers {

  private val columns = SinkColumns(
    data = 0,
    dataIsBinary = false,
    partitionKey = 1,
    explicitHashKey = None,
    streamName = Some(2),
    optionStream = None)

  private def row(data: String, stream: String) = new GenericInternalRow(
    Array[Any](UTF8String.fromString(data), UTF8String.fromString("k"), UTF8String.fromString(stream)))

  private val settings = ProducerSettings(
    ClientSettings(Some("eu-west-1"), Some(URI.create("https://127.0.0.1:1")), None, RetrySettings(3, 500, 10000)),
    recordMaxBufferedTimeMs = 100,
    maxConnections = 1,
    aggregationEnabled = true,
    recordTtlMs = 1000,
    maxPendingRecords = 1000,
    maxPendingBytes = 1L << 20)

  test("Given rows for two streams, when Kinesis confirms some (one after retries) and fails one, then each " +
    "stream's metrics count them, and rows outstanding go back to 0") {
    val producer = new FakeRecordProducer
    val metrics = mutable.Map.empty[String, WriteMetrics]
    val writer = new KinesisDataWriter(
      columns,
      new ProducerPool(_ => producer).acquire(settings),
      WriterLimits(confirmTimeoutMs = 10000L, maxPendingRecords = 1000, maxPendingBytes = 1L << 20),
      maxRecordBytes = _ => 1024L * 1024,
      metrics = s => metrics.getOrElseUpdate(s, WriteMetrics.detached))
    // When four rows are handed over
    Seq(row("a", "s1"), row("bb", "s1"), row("ccc", "s1"), row("d", "other")).foreach(writer.write)
    metrics("s1").rowsOutstanding.get shouldBe 3
    metrics("other").rowsOutstanding.get shouldBe 1
    // and Kinesis confirms the first, the second after 3 attempts, fails the third and confirms the fourth
    producer.settleNext(SendResult.Written(1))
    producer.settleNext(SendResult.Written(3))
    producer.settleNext(SendResult.Failed("throttled for too long"))
    producer.settleNext(SendResult.Written(1))
    // Then
    val s1 = metrics("s1")
    (s1.rowsWritten.getCount, s1.bytesWritten.getCount, s1.rowsRetried.getCount, s1.rowsFailed.getCount) shouldBe
      (2L, ("a" + "k" + "bb" + "k").length.toLong, 1L, 1L)
    s1.rowsOutstanding.get shouldBe 0
    (metrics("other").rowsWritten.getCount, metrics("other").rowsOutstanding.get) shouldBe (1L, 0L)
  }
}
