package io.github.sparkkinesis.it

import org.apache.spark.SparkException
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.services.kinesis.model.UpdateMaxRecordSizeRequest

import io.github.sparkkinesis.it.SinkHarness._

/**
 * Records over 1 MiB in a stream whose limit was raised with UpdateMaxRecordSize (kinesis-mock enforces and reports
 * it): the sink sends them with PutRecord in their partition key's order, and the source reads them back whole.
 */
class LargeRecordsSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {
  import SparkHarness.session.implicits._

  private val MiB = 1024 * 1024

  private def raise(stream: String, kib: Int): Unit = {
    TestStreams.client.updateMaxRecordSize(UpdateMaxRecordSizeRequest.builder().streamARN(TestStreams.arnOf(stream))
      .maxRecordSizeInKiB(kib).build())
    ()
  }

  /** "<label>:" then dots up to `n` bytes. */
  private def payload(label: String, n: Int): String = label + ":" + "." * (n - label.length - 1)

  private def summary(data: String): (String, Int) = (data.takeWhile(_ != ':'), data.length)

  test("a 1.5 MiB row between small ones of its key is written in order with PutRecord, and read back whole") {
    // Given a stream raised to 10 MiB, and rows of one key in one task: small, 1.5 MiB, small. (kinesis-mock takes
    // 5 MiB records too, but serving them back takes it longer than the SDK's 30 s read timeout.)
    val stream = TestStreams.createStream("big-records", 2)
    raise(stream, 10240)
    val labels = Seq("s1" -> 10, "big2" -> 3 * MiB / 2, "s3" -> 10)
    val rows = labels.map { case (label, n) => (payload(label, n), "key") }
    // When they are written by the sink
    rows.toDF("data", "partitionKey").coalesce(1).write.format("aws-kinesis").options(sinkOptions(Some(stream)))
      .mode("append").save()
    // Then they are in the stream in their order (one key: one shard), whole
    readBack(stream)._1.map(r => summary(r.payload)) shouldBe labels
    // And the source reads them back, whole
    val read = spark.read.format("aws-kinesis")
      .options(SparkHarness.kinesisOptions(stream, "TRIM_HORIZON") - "kinesis.startingPosition").load()
      .collect().toSeq.map(r => summary(new String(r.getAs[Array[Byte]]("data"), "UTF-8")))
    read shouldBe labels
  }

  test("a row over the stream's own limit fails the write, naming the limit, the stream and UpdateMaxRecordSize") {
    val stream = TestStreams.createStream("big-records-limit", 1)
    raise(stream, 1536)
    val error = intercept[SparkException] {
      Seq((payload("too-big", 2 * MiB), "k")).toDF("data", "partitionKey").write.format("aws-kinesis")
        .options(sinkOptions(Some(stream))).mode("append").save()
    }
    Iterator.iterate[Throwable](error)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ") should (
      include(s"stream '$stream'") and include("limit of 1536 KiB") and include("update-max-record-size"))
  }
}
