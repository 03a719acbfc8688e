package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock, UnreachableException}
import io.github.sparkkinesis.options.KinesisSourceOptions

/**
 * A query's first contact with Kinesis: an endpoint that cannot be reached fails the query at once, while the same
 * failure once the run has listed its stream is a passing one, retried for kinesis.driverRetryTimeout.
 */
class FirstContactSuite extends AnyFunSuite with Matchers {

  private def fixture(): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 2)
    (fake, clock)
  }

  private def refused = new UnreachableException("Cannot reach Kinesis at http://127.0.0.1:1 (option " +
    "kinesis.endpointUrl) for ListShards on stream 's': the connection was refused (injected)")

  private def unknownHost = new UnreachableException("Cannot reach Kinesis at https://kinesis.nowhere.invalid " +
    "(option kinesis.endpointUrl) for ListShards on stream 's': the host name does not resolve (injected)")

  test("Given an endpoint that refuses connections or does not resolve, when a new query lists its stream for the " +
    "first time, then it fails at once naming the endpoint, without retrying") {
    for (failure <- Seq(() => refused, () => unknownHost)) {
      // Given
      val (fake, clock) = fixture()
      fake.failNextCalls("ListShards", 3)(failure())
      // When the query asks for its initial offset
      val error = intercept[UnreachableException](
        new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock))
      // Then: one call (retries would have listed the stream on the fourth), and the message says what to check
      error.getMessage should (include("kinesis.endpointUrl") and include("Cannot reach Kinesis at"))
      fake.listShardsCalls shouldBe 1
    }
  }

  test("Given a query restarted from its checkpoint, when the endpoint cannot be reached as it starts, then it fails " +
    "at once too") {
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    fake.putRecordToShard("s", "shardId-000000000000", "a".getBytes(UTF_8))
    driver.drain().map(_.data) shouldBe Seq("a")
    fake.failNextCalls("ListShards", 3)(refused)
    intercept[UnreachableException](driver.restart()).getMessage should include("connection was refused")
  }

  test("Given a query restarted while a batch was in flight, when the endpoint refuses connections once it has " +
    "started, then the batch is read again, its progress reported and the next batch planned") {
    // Given a batch planned and read, but not committed, when the driver died
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    fake.putRecordToShard("s", "shardId-000000000000", "a".getBytes(UTF_8))
    val inFlight = driver.plan().get
    driver.read(inFlight).map(_.data) shouldBe Seq("a")
    // When the query starts again and then the endpoint refuses connections (an outage)
    driver.restart()
    fake.failNextCalls("ListShards", 3)(refused)
    // Then the batch is read again and its progress reported (Spark asks for the metrics before planning the next)
    driver.read(inFlight).map(_.data) shouldBe Seq("a")
    driver.stream.metrics(java.util.Optional.of(inFlight)).get("shardsOpen") shouldBe "2"
    driver.stream.commit(inFlight)
    driver.committed = inFlight
    // And the next batch rides the outage out
    fake.putRecordToShard("s", "shardId-000000000001", "b".getBytes(UTF_8))
    driver.drain().map(_.data) shouldBe Seq("b")
  }

  test("Given a run that has listed its stream, when the endpoint then refuses connections, then the driver goes " +
    "on with its last listing and retries") {
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    driver.plan() shouldBe None
    fake.failNextCalls("ListShards", 3)(refused)
    fake.putRecordToShard("s", "shardId-000000000001", "b".getBytes(UTF_8))
    driver.drain().map(_.data) shouldBe Seq("b")
  }

  test("Given a batch read, when the endpoint cannot be reached at its listing, then it fails at once") {
    val (fake, clock) = fixture()
    val batch = new KinesisBatch(
      KinesisSourceOptions.parse(Map(
        "kinesis.streamName" -> "s",
        "kinesis.clientRetryIntervalsMs" -> "1",
        "kinesis.clientMaxRetryIntervalMs" -> "2")),
      _ => fake,
      () => 2,
      clock)
    fake.failNextCalls("ListShards", 3)(unknownHost)
    intercept[UnreachableException](batch.planInputPartitions()).getMessage should include("does not resolve")
    fake.listShardsCalls shouldBe 1
  }
}
