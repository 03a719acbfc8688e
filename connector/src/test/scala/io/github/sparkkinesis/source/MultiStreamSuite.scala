package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.KinesisSourceOffset

/** Several streams in one query: each record once, tagged with its stream; streams added and removed on restart. */
class MultiStreamSuite extends AnyFunSuite with Matchers {

  private val clicksArn = "arn:aws:kinesis:us-east-1:123456789012:stream/clicks"

  private def put(fake: FakeKinesisClient, stream: String, n: Int, prefix: String): Seq[(String, String)] =
    (1 to n).map { i =>
      fake.putRecord(stream, s"$prefix-$i", s"$prefix-$i".getBytes(UTF_8))
      StreamName(stream) -> s"$prefix-$i"
    }

  private object StreamName {
    def apply(stream: String): String = stream.substring(stream.lastIndexOf('/') + 1)
  }

  private def fixture(): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("orders", 3)
    fake.createStream("payments", 2)
    fake.createStream(clicksArn, 1) // the fake names it as given; the query reads it by ARN
    (fake, clock)
  }

  test("given two streams by name and one by ARN, when drained, then every record comes once with its stream's " +
    "name, and each stream has its own metrics") {
    val (fake, clock) = fixture()
    val expected = put(fake, "orders", 30, "o") ++ put(fake, "payments", 20, "p") ++ put(fake, clicksArn, 5, "c")
    val driver = new MicroBatchDriver(
      fake,
      Map(
        "kinesis.streamName" -> "orders, payments",
        "kinesis.streamARN" -> clicksArn,
        "kinesis.startingPosition" -> "TRIM_HORIZON"),
      clock = clock)
    val end = driver.plan().get
    val rows = driver.read(end)
    rows.map(r => r.stream -> r.data) should contain theSameElementsAs expected
    driver.stream.commit(end)
    driver.committed = end
    val metrics = driver.stream.metrics(java.util.Optional.of(end))
    metrics.get("recordsRead") shouldBe "55"
    metrics.get("stream.orders.recordsRead") shouldBe "30"
    metrics.get("stream.payments.recordsRead") shouldBe "20"
    metrics.get("stream.clicks.recordsRead") shouldBe "5"
    metrics.get("stream.orders.shardsOpen") shouldBe "3"
    metrics.get("shardsOpen") shouldBe "6"
    driver.drain() shouldBe empty
  }

  test("given a reshard in one of two streams, when drained, then both streams' records come once and the " +
    "children's after their parent's") {
    val (fake, clock) = fixture()
    val before = put(fake, "orders", 10, "o") ++ put(fake, "payments", 10, "p")
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.streamName" -> "orders,payments", "kinesis.startingPosition" -> "TRIM_HORIZON"),
      clock = clock)
    driver.drain().map(r => r.stream -> r.data) should contain theSameElementsAs before
    val (left, right) = fake.splitShard("payments", "shardId-000000000000", BigInt(2).pow(126))
    val after = put(fake, "orders", 10, "o2") ++ put(fake, "payments", 40, "p2")
    driver.drain().map(r => r.stream -> r.data) should contain theSameElementsAs after
    driver.batches.flatten.filter(_.stream == "payments").map(_.shardId).toSet should contain allOf (left, right)
  }

  test("given a query restarted with a stream added, then the new stream starts at kinesis.startingPosition and " +
    "the others go on where they were") {
    val (fake, clock) = fixture()
    val first = put(fake, "orders", 10, "o")
    val backlog = put(fake, "payments", 7, "p")
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.streamName" -> "orders", "kinesis.startingPosition" -> "TRIM_HORIZON"),
      clock = clock)
    driver.drain().map(r => r.stream -> r.data) should contain theSameElementsAs first
    val restarted = new MicroBatchDriver(
      fake,
      Map("kinesis.streamName" -> "orders,payments", "kinesis.startingPosition" -> "TRIM_HORIZON"),
      driver.checkpoint,
      clock)
    restarted.committed = driver.committed
    val later = put(fake, "orders", 3, "o2")
    restarted.drain().map(r => r.stream -> r.data) should contain theSameElementsAs (backlog ++ later)
  }

  test("given a query restarted with a stream added at LATEST, then its records from the restart on come, once") {
    val (fake, clock) = fixture()
    put(fake, "payments", 7, "old")
    val driver = new MicroBatchDriver(fake, Map("kinesis.streamName" -> "orders"), clock = clock)
    driver.drain()
    clock.advance(10)
    val restarted = new MicroBatchDriver(fake, Map("kinesis.streamName" -> "orders,payments"), driver.checkpoint, clock)
    restarted.committed = driver.committed
    // the addition is recorded in the next offset at once, so its LATEST is fixed before anything else arrives
    restarted.runBatch() shouldBe Some(Nil)
    KinesisSourceOffset.fromJson(restarted.committed.json()).streams.keySet shouldBe Set("orders", "payments")
    clock.advance(10)
    val fresh = put(fake, "payments", 4, "new")
    restarted.drain().map(r => r.stream -> r.data) should contain theSameElementsAs fresh
  }

  test("given a query restarted without one of its streams, then it refuses to start unless " +
    "kinesis.allowStreamRemoval is true, and then forgets that stream") {
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.streamName" -> "orders,payments", "kinesis.startingPosition" -> "TRIM_HORIZON"),
      clock = clock)
    put(fake, "orders", 2, "o") ++ put(fake, "payments", 2, "p")
    driver.drain() should have size 4
    val refused = new MicroBatchDriver(fake, Map("kinesis.streamName" -> "orders"), driver.checkpoint, clock)
    refused.committed = driver.committed
    intercept[IllegalStateException](refused.plan()).getMessage should
      (include("payments") and include("kinesis.allowStreamRemoval=true"))
    val allowed = new MicroBatchDriver(
      fake,
      Map("kinesis.streamName" -> "orders", "kinesis.allowStreamRemoval" -> "true"),
      driver.checkpoint,
      clock)
    allowed.committed = driver.committed
    val more = put(fake, "orders", 3, "o2")
    put(fake, "payments", 3, "p2")
    allowed.drain().map(r => r.stream -> r.data) should contain theSameElementsAs more
    KinesisSourceOffset.fromJson(allowed.committed.json()).streams.keySet shouldBe Set("orders")
  }

  test("given enhanced fan-out through one consumer ARN, when the query reads two streams, then it refuses to start, " +
    "naming kinesis.consumerName as the way") {
    val (fake, clock) = fixture()
    val failure = intercept[IllegalArgumentException](new MicroBatchDriver(
      fake,
      Map(
        "kinesis.streamName" -> "orders,payments",
        "kinesis.consumerType" -> "SubscribeToShard",
        "kinesis.consumerArn" -> "arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/q:1700000000"),
      clock = clock))
    failure.getMessage should (include("reads 2 streams") and include("set kinesis.consumerName instead"))
  }
}
