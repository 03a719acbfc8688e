package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}

/** Trigger.AvailableNow and read limits, driven as Spark drives them, against the fake client. */
class AvailableNowSuite extends AnyFunSuite with Matchers {

  private def fixture(shards: Int = 2): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", shards)
    (fake, clock)
  }

  private def put(fake: FakeKinesisClient, clock: ManualClock, prefix: String, n: Int): Seq[String] = {
    clock.advance(1)
    (1 to n).map { i => fake.putRecord("s", s"$prefix-$i", s"$prefix-$i".getBytes(UTF_8)); s"$prefix-$i" }
  }

  test("given a checkpoint that ran a while, when AvailableNow runs twice with a split in between, then each run " +
    "reads exactly the records that had arrived when it began, and stops") {
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    val first = put(fake, clock, "first", 30)
    driver.drain().map(_.data) should contain theSameElementsAs first

    val second = put(fake, clock, "second", 30)
    driver.availableNow().flatten.map(_.data) should contain theSameElementsAs second

    val beforeSplit = put(fake, clock, "third", 20)
    fake.splitShard("s", "shardId-000000000000", BigInt(2).pow(126))
    val afterSplit = put(fake, clock, "fourth", 20)
    val run = driver.availableNow()
    run.flatten.map(_.data) should contain theSameElementsAs beforeSplit ++ afterSplit
    driver.availableNow() shouldBe empty
  }

  test("given records that arrive during an AvailableNow run, then they belong to the next run") {
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.maxRecordsPerTrigger" -> "10"),
      clock = clock)
    val before = put(fake, clock, "before", 40)
    driver.restart()
    driver.stream.prepareForTriggerAvailableNow()
    driver.runBatch().get should have size 10
    val during = put(fake, clock, "during", 15)
    val rest = Iterator.continually(driver.runBatch()).takeWhile(_.isDefined).flatMap(_.get).toVector
    (driver.batches.head ++ rest).map(_.data) should contain theSameElementsAs before
    driver.availableNow().flatten.map(_.data) should contain theSameElementsAs during
  }

  test("given a fresh checkpoint and a shard closed before the run, then AvailableNow reads parents, then children, " +
    "to the target, in several bounded batches") {
    val (fake, clock) = fixture(shards = 1)
    val parent = put(fake, clock, "parent", 12)
    val (left, right) = fake.splitShard("s", "shardId-000000000000", BigInt(2).pow(127))
    val children = put(fake, clock, "child", 12)
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.maxRecordsPerTrigger" -> "5"),
      clock = clock)
    val run = driver.availableNow()
    run.size should be > 3
    run.foreach(batch => batch.size should be <= 5)
    val rows = run.flatten
    rows.map(_.data) should contain theSameElementsAs parent ++ children
    val lastParent = rows.lastIndexWhere(_.shardId == "shardId-000000000000")
    rows.indexWhere(r => r.shardId == left || r.shardId == right) should be > lastParent
  }

  test("given throttled checks during an AvailableNow run, then the run waits for answers and still reads everything") {
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    driver.plan() shouldBe None
    val all = put(fake, clock, "r", 30)
    driver.restart()
    driver.stream.prepareForTriggerAvailableNow()
    fake.throttleNextGetRecords(2) // both shards' first checks
    val rows = Iterator.continually(driver.runBatch()).takeWhile(_.isDefined).flatMap(_.get).toVector
    rows.map(_.data) should contain theSameElementsAs all
  }

  test("given empty pages before the first record past the bound, then the run still ends, with that record left " +
    "for the next run") {
    val (fake, clock) = fixture(shards = 1)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    val before = put(fake, clock, "before", 3)
    driver.drain()
    driver.restart()
    driver.stream.prepareForTriggerAvailableNow()
    val late = put(fake, clock, "late", 2)
    fake.emptyPagesAhead("s", "shardId-000000000000", 5) // AWS: empty pages, MillisBehindLatest above 0
    val run = Iterator.continually(driver.runBatch()).takeWhile(_.isDefined).take(20).flatMap(_.get).toVector
    driver.plan() shouldBe None
    run shouldBe empty
    before should have size 3
    driver.availableNow().flatten.map(_.data) should contain theSameElementsAs late
  }

  test("given a read limit, then a default-trigger batch stays under it and replays are exact") {
    val (fake, clock) = fixture(shards = 4)
    val all = put(fake, clock, "r", 100)
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.maxRecordsPerTrigger" -> "20"),
      clock = clock)
    val end = driver.plan().get
    val first = driver.read(end)
    first.size should be <= 20
    driver.read(end) should contain theSameElementsAs first
    driver.stream.commit(end)
    driver.committed = end
    driver.drain().map(_.data) should contain theSameElementsAs all.filterNot(first.map(_.data).toSet)
    driver.batches.foreach(_.size should be <= 20)
  }

  test("given a read limit, when Spark asks with Trigger.Once's limit (all available), then one batch reads it all") {
    val (fake, clock) = fixture()
    val all = put(fake, clock, "r", 50)
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.maxRecordsPerTrigger" -> "5"),
      clock = clock)
    driver.stream.getDefaultReadLimit shouldBe ReadLimit.maxRows(5)
    driver.runBatch(ReadLimit.allAvailable()).get.map(_.data) should contain theSameElementsAs all
  }
}
