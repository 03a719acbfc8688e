package io.github.sparkkinesis.sink

import java.net.URI

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{AccessException, ClientSettings, FakeKinesisClient, ManualClock, RetrySettings}

class RecordSizeLimitSuite extends AnyFunSuite with Matchers {
  private val MiB = 1024 * 1024
  private val client = ClientSettings(
    Some("eu-west-1"),
    Some(URI.create("https://127.0.0.1:1")),
    None,
    RetrySettings(3, 500, 10000),
    verifyCertificate = false)

  private final class Setup {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    val check = new StreamCheck(_ => fake, clock, refreshMs = 60000L)
  }

  test("Given a stream that does not report its limit (kinesis-mock), when the sink reads it, then it is 1 MiB") {
    val setup = new Setup
    setup.check.maxRecordBytes(client, "s") shouldBe MiB
    setup.fake.callsOf("DescribeStreamSummary") shouldBe 1
  }

  test("Given a stream raised to 10 MiB, when the sink reads its limit, then it is 10 MiB, read once a minute") {
    // Given a stream whose limit was raised, read by the sink once
    val setup = new Setup
    setup.fake.updateMaxRecordSize("s", 10240)
    setup.check.maxRecordBytes(client, "s") shouldBe 10 * MiB
    // When it is lowered, then the sink keeps the value it read until the refresh period has passed
    setup.fake.updateMaxRecordSize("s", 2048)
    setup.check.maxRecordBytes(client, "s") shouldBe 10 * MiB
    setup.fake.callsOf("DescribeStreamSummary") shouldBe 1
    setup.clock.advance(60000L)
    setup.check.maxRecordBytes(client, "s") shouldBe 2 * MiB
    setup.fake.callsOf("DescribeStreamSummary") shouldBe 2
  }

  test("Given credentials that may not describe the stream, when the sink reads its limit, then it takes 1 MiB") {
    val setup = new Setup
    setup.fake.updateMaxRecordSize("s", 10240)
    setup.fake.failNextCalls("DescribeStreamSummary", 1)(new AccessException("not authorized (injected)"))
    setup.check.maxRecordBytes(client, "s") shouldBe MiB
  }

  test("Given a missing stream, when the sink checks it, then it fails naming the stream") {
    val setup = new Setup
    (the[KinesisSinkException] thrownBy setup.check.maxRecordBytes(client, "gone")).getMessage should
      include("Cannot write to Kinesis stream 'gone'")
  }

  private def writer(limit: Long, producer: FakeRecordProducer): KinesisDataWriter = {
    val columns = SinkColumns(
      data = 0,
      dataIsBinary = true,
      partitionKey = 1,
      explicitHashKey = None,
      streamName = None,
      optionStream = Some("orders"))
    val settings = ProducerSettings(
      client,
      recordMaxBufferedTimeMs = 100,
      maxConnections = 1,
      aggregationEnabled = true,
      recordTtlMs = 1000,
      maxPendingRecords = 1000,
      maxPendingBytes = MiB)
    new KinesisDataWriter(
      columns,
      new ProducerPool(_ => producer).acquire(settings),
      WriterLimits(confirmTimeoutMs = 10000L, maxPendingRecords = 1000, maxPendingBytes = MiB),
      _ => limit)
  }

  private def row(bytes: Int, key: String) =
    new GenericInternalRow(Array[Any](Array.fill(bytes)(1.toByte), UTF8String.fromString(key)))

  test("Given a stream of the default 1 MiB limit, when a row is one byte over it with its key, then the task " +
    "fails naming the limit, the stream and UpdateMaxRecordSize") {
    val producer = new FakeRecordProducer
    val w = writer(MiB, producer)
    w.write(row(MiB - 3, "key")) // exactly the limit: partition key and data count together
    (the[KinesisSinkException] thrownBy w.write(row(MiB - 2, "key"))).getMessage should (
      include("stream 'orders'") and include(s"${MiB + 1} bytes") and include("limit of 1024 KiB") and
        include("the default") and include("aws kinesis update-max-record-size") and include("UpdateMaxRecordSize"))
    producer.sent.size shouldBe 1
  }

  test("Given a stream raised to 10 MiB, when a row of 10 MiB is written, then it reaches the producer; over 10 MiB " +
    "no stream takes it, and the row fails naming its column") {
    val producer = new FakeRecordProducer
    val w = writer(10L * MiB, producer)
    w.write(row(10 * MiB - 1, "k"))
    producer.sent.map(_.size) shouldBe Seq(10L * MiB)
    producer.confirmAll()
    (the[IllegalArgumentException] thrownBy w.write(row(10 * MiB, "k"))).getMessage should include("column 'data'")
  }

  test("Given a stream raised to 2 MiB, when a row is over it, then the task fails naming 2048 KiB") {
    val producer = new FakeRecordProducer
    val w = writer(2L * MiB, producer)
    w.write(row(2 * MiB - 1, "k"))
    (the[KinesisSinkException] thrownBy w.write(row(2 * MiB, "k"))).getMessage should
      (include("limit of 2048 KiB") and not include "the default")
    producer.sent.size shouldBe 1
  }
}
