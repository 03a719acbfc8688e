package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.{Failure, Try}

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock, ThrottledException}
import io.github.sparkkinesis.source.reading.SubscriptionCache

/** Whole micro-batches through enhanced fan-out: the driver's planning, the consumer, the tasks' subscriptions. */
class FanOutMicroBatchSuite extends AnyFunSuite with Matchers with BeforeAndAfterEach {

  override def afterEach(): Unit = SubscriptionCache.shared.evict(0L)

  private val efo =
    Map("kinesis.consumerType" -> "EFO", "kinesis.consumerName" -> "q", "kinesis.startingPosition" -> "TRIM_HORIZON")

  private def put(fake: FakeKinesisClient, n: Int, prefix: String): Seq[String] =
    (1 to n).map { i => fake.putRecord("s", s"k${i % 7}", s"$prefix$i".getBytes(UTF_8)); s"$prefix$i" }

  test("given kinesis.consumerArn of another stream's consumer, when the query starts, then it refuses to, naming " +
    "the option, the ARN, both streams and the fix, instead of reading the other stream's records under this name") {
    // Given streams s and other, both with records and with the same shard ids, and a consumer of other
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    fake.createStream("other", 1)
    fake.putRecord("s", "k", "s1".getBytes(UTF_8))
    (1 to 3).foreach(i => fake.putRecord("other", s"k$i", s"o$i".getBytes(UTF_8)))
    val theirs = fake.registerConsumer(fake.streamArn("other"), "theirs").arn

    // When a query of stream s is given that consumer
    val started = Try(new MicroBatchDriver(
      fake,
      Map(
        "kinesis.consumerType" -> "EFO",
        "kinesis.consumerArn" -> theirs,
        "kinesis.startingPosition" -> "TRIM_HORIZON"),
      clock = clock).drain().map(r => s"${r.stream}:${r.data}"))

    // Then
    started should matchPattern { case Failure(_: IllegalArgumentException) => }
    started.failed.get.getMessage shouldBe s"Option kinesis.consumerArn is '$theirs', a consumer of stream 'other' " +
      "of account 123456789012 in us-east-1, but the query reads stream 's' (option kinesis.streamName): a " +
      "consumer serves only its own stream's shards, and shard ids repeat across streams, so the query would read " +
      "the other stream's records labelled as stream 's'. Give the ARN of a consumer of stream 's' (aws kinesis " +
      "list-stream-consumers --stream-arn <its ARN>), or set kinesis.consumerName instead of kinesis.consumerArn " +
      "to let the connector register a consumer of that name on stream 's'."
    fake.callsOf("SubscribeToShard") shouldBe 0
  }

  test("given a split and a merge between batches, when drained through subscriptions, then each record comes once") {
    splitAndMerge(childShardsInEvents = true)
  }

  test(
    "given a split and a merge and no child shards in events (the emulator), when drained, then each record comes " +
      "once") {
    splitAndMerge(childShardsInEvents = false)
  }

  private def splitAndMerge(childShardsInEvents: Boolean): Unit = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.fanOut.sendChildShards = childShardsInEvents
    fake.createStream("s", 2)
    val driver = new MicroBatchDriver(fake, efo, clock = clock)
    val first = put(fake, 40, "a")
    val read1 = driver.drain()
    val (_, upper) = fake.splitShard("s", "shardId-000000000000", BigInt(2).pow(126))
    val second = put(fake, 40, "b")
    val read2 = driver.drain()
    fake.mergeShards("s", upper, "shardId-000000000001")
    val third = put(fake, 40, "c")
    val read3 = driver.drain()
    (read1 ++ read2 ++ read3).map(_.data).sorted shouldBe (first ++ second ++ third).sorted
    fake.getRecordsCalls should be < fake.callsOf("SubscribeToShard") * 4 // the driver's checks only
    fake.fanOut.consumerNames shouldBe Seq("q")
    driver.stream.stop()
    fake.fanOut.consumerNames shouldBe empty
  }

  test("given another account's stream named only by kinesis.streamARN, when read through fan-out and by polling, " +
    "then every record comes once: every call names the stream by its ARN") {
    // Given a stream the caller's account cannot name (the fake refuses an ARN given as StreamName, as AWS does)
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val arn = "arn:aws:kinesis:us-east-1:210987654321:stream/shared"
    fake.createStream(arn, 2)
    val expected = (1 to 30).map { i => fake.putRecord(arn, s"k$i", s"r$i".getBytes(UTF_8)); s"r$i" }
    val byArn = Map("kinesis.streamARN" -> arn, "kinesis.startingPosition" -> "TRIM_HORIZON")

    // When
    val fanOut = new MicroBatchDriver(
      fake,
      byArn ++ Map("kinesis.consumerType" -> "EFO", "kinesis.consumerName" -> "q"),
      clock = clock)
    val pushed = fanOut.drain()
    fanOut.stream.stop()
    val polled = new MicroBatchDriver(fake, byArn, clock = clock).drain()

    // Then
    pushed.map(_.data) should contain theSameElementsAs expected
    polled.map(_.data) should contain theSameElementsAs expected
    (pushed ++ polled).map(_.stream).distinct shouldBe Seq("shared")
    fake.callsOf("DescribeStreamSummary") shouldBe 1
    fake.callsOf("SubscribeToShard") should be > 0
    fake.fanOut.consumerNames shouldBe empty // registered on the shared stream and deregistered on stop
  }

  test("given 200 shards read through subscriptions for 10 batches and more, when tasks read their shards to the " +
    "tip, then no task lists the stream: the driver lists it at most once a batch, throttled listings are retried") {
    // Given the emulator's subscriptions, which never name child shards, and a split on the way
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.fanOut.sendChildShards = false
    val shards = fake.createStream("s", 200)
    val driver = new MicroBatchDriver(fake, efo + ("kinesis.describeShardInterval" -> "1s"), clock = clock)
    val listedAtStart = fake.listShardsCalls
    val expected = Seq.newBuilder[String]

    // When
    (1 to 10).foreach { b =>
      if (b == 3) fake.splitShard("s", shards(7), BigInt(2).pow(128) / 200 * 7 + 1000)
      if (b == 5) fake.failNextCalls("ListShards", 2)(new ThrottledException("Rate exceeded (injected)"))
      expected ++= put(fake, 1000, s"b$b-")
      clock.advance(1000L)
      driver.runBatch()
    }
    driver.drain()

    // Then every record came once (the split shard's children are read only once it was read to its end), and the
    // listings stayed one a batch
    driver.batches.flatten.map(_.data) should contain theSameElementsAs expected.result()
    // (plus a look after the last batch, and the throttled listing)
    (fake.listShardsCalls - listedAtStart) should be <= driver.batches.size + 1 + 2
  }

  test("given a shard streaming through a subscription whose records reach the task seconds after they arrived, " +
    "when its batch ends, then the next batch reads it again without a GetRecords check") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    val driver = new MicroBatchDriver(fake, efo + ("kinesis.idleShardCheckInterval" -> "1s"), clock = clock)
    val first = put(fake, 10, "a")
    clock.advance(2000L) // the records wait on the executor, as they do between the emulator's once-a-second events
    driver.runBatch().get.map(_.data) should contain theSameElementsAs first
    val second = put(fake, 10, "b")
    clock.advance(2000L)
    val checksBefore = fake.getRecordsCalls
    driver.runBatch().get.map(_.data) should contain theSameElementsAs second
    fake.getRecordsCalls shouldBe checksBefore
  }

  test("given restarts that switch between polling and fan-out, when drained, then nothing is lost or doubled") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 2)
    val polling = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    val a = put(fake, 30, "a")
    val readA = polling.drain()
    val pushed = new MicroBatchDriver(fake, efo, polling.checkpoint, clock)
    pushed.committed = polling.committed // a restart with other options: Spark resumes from its offset log
    val b = put(fake, 30, "b")
    val readB = pushed.drain()
    pushed.stream.stop()
    val polledAgain = new MicroBatchDriver(fake, Map.empty, polling.checkpoint, clock)
    polledAgain.committed = pushed.committed
    val c = put(fake, 30, "c")
    val readC = polledAgain.drain()
    (readA ++ readB ++ readC).map(_.data).sorted shouldBe (a ++ b ++ c).sorted
  }
}
