package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, ShardFilter, ShardFilterType}

import io.github.sparkkinesis.client.{FakeKinesisClient, FakeListShards, KinesisClientException, ManualClock}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.source.reading.SubscriptionCache

/**
 * Whole micro-batches over the fake client in the situations where other Kinesis connectors lost or stalled records,
 * each test named by the peer's issue (the reader-level cases are in FanOutPagesSuite and RealTimeRowsSuite, under the
 * same names):
 *   - awslabs/spark-sql-kinesis-connector#91: fan-out from LATEST (an AT_TIMESTAMP of the start) on thousands of idle
 *     shards re-subscribed at the same instant forever;
 *   - FLINK-37627: a restart between a parent shard's end and its children's start lost the children's records;
 *   - FLINK-36947: idle shards were polled without pause, and throttled;
 *   - apache/beam#33478: ListShards past 1,000 shards sent ShardFilter with the NextToken, which AWS refuses.
 */
class PeerRegressionsSuite extends AnyFunSuite with Matchers with BeforeAndAfterEach {

  override def afterEach(): Unit = SubscriptionCache.shared.evict(0L)

  private def efo(start: String) =
    Map("kinesis.consumerType" -> "EFO", "kinesis.consumerName" -> "q", "kinesis.startingPosition" -> start)

  /** A query of a new stream of `shards` shards on a manual clock: the clock, the fake, the shard ids, the driver. */
  private def query(shards: Int, options: Map[String, String]) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val ids = fake.createStream("s", shards)
    (clock, fake, ids, new MicroBatchDriver(fake, options, clock = clock))
  }

  private def put(fake: FakeKinesisClient, shardId: String, values: Seq[String]): Seq[String] = {
    values.foreach(v => fake.putRecordToShard("s", shardId, v.getBytes(UTF_8)))
    values
  }

  test("awslabs/spark-sql-kinesis-connector#91: given 1,000 idle shards read through fan-out from LATEST, when the " +
    "query runs for 12 minutes, then an idle shard costs no subscription and an iterator per 5 minutes at most, and " +
    "the records put into a few shards are read once") {
    // Given
    val paced = Map("kinesis.idleShardCheckInterval" -> "1s", "kinesis.describeShardInterval" -> "1m")
    val (clock, fake, shards, driver) = query(1000, efo("LATEST") ++ paced)
    val busy = Seq(shards(3), shards(500), shards(999))
    val expected = mutable.Buffer.empty[String]

    // When a trigger comes every 4 s for 12 minutes, and the busy shards get a record every minute but the last
    (1 to 180).foreach { tick =>
      if (tick % 15 == 0 && tick < 180) busy.foreach(id => expected ++= put(fake, id, Seq(s"$tick-$id")))
      driver.runBatch()
      clock.advance(4000L)
    }

    // Then
    driver.batches.flatten.map(_.data) should contain theSameElementsAs expected
    val renewals = 12 / 5 + 2 // a subscription or an iterator lasts 5 minutes
    fake.callsOf("SubscribeToShard") should be <= busy.size * renewals
    fake.shardIteratorCalls should be <= shards.size * renewals
  }

  /** Where a query restarts around a parent's last batch (1) and its children's first (2). */
  private val restartPoints = Seq(
    "after batch 1 was read and before its commit",
    "after batch 1's commit",
    "after batch 2 was planned",
    "after batch 2 was read and before its commit")

  for {
    (consumer, options) <- Seq(
      "polling" -> Map("kinesis.startingPosition" -> "TRIM_HORIZON"),
      "fan-out" -> efo("TRIM_HORIZON"))
    (point, index) <- restartPoints.zipWithIndex
  } test(s"FLINK-37627: given a parent shard read to its end by $consumer in batch 1 and its children read from " +
    s"batch 2, when the query restarts $point, then every record of parent and children is committed exactly once") {
    // Given a parent with records before and after batch 0, split, and children with records
    val (_, fake, Seq(parent), driver) = query(1, options)
    val expected = mutable.Buffer.empty[String] ++ put(fake, parent, (1 to 20).map(i => s"p$i"))
    val committed = mutable.Buffer.empty[String]
    def commit(end: KinesisSourceOffset, rows: Seq[Out]): Unit = {
      driver.stream.commit(end)
      driver.committed = end
      committed ++= rows.map(_.data)
    }
    committed ++= driver.runBatch().get.map(_.data)
    expected ++= put(fake, parent, (21 to 25).map(i => s"p$i"))
    val (left, right) = fake.splitShard("s", parent, BigInt(2).pow(127))
    expected ++= put(fake, left, (1 to 10).map(i => s"l$i")) ++ put(fake, right, (1 to 10).map(i => s"r$i"))
    val end1 = driver.plan().get
    val rows1 = driver.read(end1)
    rows1.map(_.data) shouldBe (21 to 25).map(i => s"p$i") // the parent to its end, no child yet

    // When
    if (index == 0) {
      driver.restart()
      commit(end1, driver.read(end1)) // Spark replays the batch its offset log holds
    } else {
      commit(end1, rows1)
      if (index == 1) driver.restart()
      else {
        val end2 = driver.plan().get
        if (index == 3) driver.read(end2)
        driver.restart()
        commit(end2, driver.read(end2))
      }
    }
    committed ++= driver.drain().map(_.data)
    expected ++= put(fake, left, Seq("l11")) ++ put(fake, right, Seq("r11"))
    committed ++= driver.drain().map(_.data)

    // Then
    committed should contain theSameElementsAs expected
  }

  test("FLINK-36947: given 200 idle shards whose checks are throttled for 30 s, when the query polls them for a " +
    "minute, then it stays within one call per second per shard, fails nothing, keeps every position and reads the " +
    "next record once") {
    // Given the connector's default pacing
    val (clock, fake, shards, driver) = query(
      200,
      Map(
        "kinesis.startingPosition" -> "LATEST",
        "kinesis.getRecords.fetchIntervalMs" -> "500",
        "kinesis.idleShardCheckInterval" -> "1s",
        "kinesis.describeShardInterval" -> "1s"))
    val start = driver.committed
    val before = fake.getRecordsCalls

    // When Spark asks every 100 ms, throttled for the first 30 s
    fake.throttleNextGetRecords(Int.MaxValue)
    (1 to 600).foreach { tick =>
      if (tick == 300) fake.throttleNextGetRecords(0)
      driver.plan() shouldBe None
      clock.advance(100L)
    }

    // Then
    val perShardPerSecond = (fake.getRecordsCalls - before).toDouble / shards.size / 60
    perShardPerSecond should be <= 1.02
    driver.committed shouldBe start
    val late = put(fake, shards(123), Seq("late"))
    // A look checks the 64 most overdue of the 200 due shards: within 4 looks each was checked
    val read = (1 to 4).flatMap { _ =>
      clock.advance(1000L)
      driver.runBatch().toSeq.flatten
    }
    read.map(_.data) shouldBe late
  }

  test("apache/beam#33478: given a stream of 2,500 shards, when it is listed and read, then the pages after the " +
    "first carry the NextToken alone, as AWS demands, and every shard is read") {
    // Given
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val shards = fake.createStream("s", 2500)
    val described = fake.listShards("s")
    val first = FakeListShards.answer(ListShardsRequest.builder().streamName("s").build(), (_, _) => described)
    val filter = ShardFilter.builder().`type`(ShardFilterType.AT_LATEST).build()

    // When
    val listed = fake.listShards("s")
    val listingCalls = fake.listShardsCalls
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    val expected = put(fake, shards.head, Seq("first")) ++ put(fake, shards.last, Seq("last"))

    // Then: the fake refuses what Beam sent, and the connector's listing is whole
    intercept[KinesisClientException](FakeListShards.answer(
      ListShardsRequest.builder().nextToken(first.nextToken).shardFilter(filter).build(),
      (_, _) => described)).getMessage should include("NextToken and ShardFilter cannot be provided together")
    first.shards.size shouldBe 1000
    listed.map(_.shardId) shouldBe shards
    listingCalls shouldBe 6 // three pages per listing
    driver.committed.streams("s").keySet shouldBe shards.toSet
    driver.drain().map(_.data) should contain theSameElementsAs expected
  }
}
