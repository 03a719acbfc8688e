package io.github.sparkkinesis.sink

import java.util.concurrent.{ArrayBlockingQueue, TimeUnit}

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{
  Backoff,
  FakeKinesisClient,
  KinesisClientException,
  ManualClock,
  ThrottledException
}

class PutRecordProducerSuite extends AnyFunSuite with Matchers {
  private val MiB = 1024 * 1024

  private final class Setup(recordTtlMs: Long = 30000L) {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("big", 2)
    val sleeps = new java.util.concurrent.atomic.AtomicLong
    val producer = new PutRecordProducer(
      () => fake,
      recordTtlMs,
      () => new Backoff(100, 1000),
      threads = 2,
      clock,
      sleep = ms => { sleeps.addAndGet(ms); clock.advance(ms) })

    def put(record: OutgoingRecord): SendResult = {
      val done = new ArrayBlockingQueue[SendResult](1)
      producer.send(record, r => done.put(r))
      Option(done.poll(10, TimeUnit.SECONDS)).getOrElse(fail("no answer within 10 s"))
    }
  }

  private def record(bytes: Int, key: String = "k") = OutgoingRecord("big", key, None, Array.fill(bytes)(7.toByte))

  test("Given a stream raised to 10 MiB, when a record of 10 MiB with its key is put, then Kinesis stores it") {
    val setup = new Setup
    setup.fake.updateMaxRecordSize("big", 10240)
    setup.put(record(10 * MiB - 1, "k")) shouldBe SendResult.Written(1)
    setup.fake.recordsOf("big").map(r => (r.partitionKey, r.data.length)) shouldBe Seq(("k", 10 * MiB - 1))
    setup.producer.destroy()
  }

  test("Given PutRecord throttled three times, when a record is put, then it is tried again until Kinesis takes it") {
    val setup = new Setup
    setup.fake.updateMaxRecordSize("big", 2048)
    setup.fake.failNextCalls("PutRecord", 3)(new ThrottledException("Rate exceeded for shard (injected)"))
    setup.put(record(2 * MiB - 1)) shouldBe SendResult.Written(4)
    setup.fake.callsOf("PutRecord") shouldBe 4
    setup.fake.recordsOf("big").size shouldBe 1
    setup.producer.destroy()
  }

  test("Given PutRecord failing on the way twice (a reset connection), when a record is put, then it goes again") {
    val setup = new Setup
    setup.fake.updateMaxRecordSize("big", 2048)
    setup.fake.failNextCalls("PutRecord", 2)(new KinesisClientException("Connection reset (injected)"))
    setup.put(record(2 * MiB - 1)) shouldBe SendResult.Written(3)
    setup.fake.recordsOf("big").size shouldBe 1
    setup.producer.destroy()
  }

  test("Given PutRecord throttled beyond the record's TTL, when a record is put, then it fails naming the TTL") {
    val setup = new Setup(recordTtlMs = 5000L)
    setup.fake.updateMaxRecordSize("big", 2048)
    setup.fake.failNextCalls("PutRecord", 1000000)(new ThrottledException("Rate exceeded for shard (injected)"))
    setup.put(record(2 * MiB - 1)) match {
      case SendResult.Failed(reason) => reason should (include("stream 'big'") and include("kinesis.sink.recordTtl " +
          "(5000 ms)") and include("PutRecord") and include("at least once"))
      case other => fail(s"expected a failure, got $other")
    }
    setup.sleeps.get should (be >= 5000L and be <= 6000L)
    setup.producer.destroy()
  }

  test("Given a record over the stream's limit, when it is put, then it fails at once with Kinesis's reason") {
    val setup = new Setup
    setup.put(record(2 * MiB)) match {
      case SendResult.Failed(reason) => reason should (include("stream 'big'") and include("ValidationException") and
          include("1 attempt(s)"))
      case other => fail(s"expected a failure, got $other")
    }
    setup.fake.callsOf("PutRecord") shouldBe 1
    setup.producer.destroy()
  }
}
