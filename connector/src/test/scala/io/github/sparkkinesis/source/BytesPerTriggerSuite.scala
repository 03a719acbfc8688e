package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.source.reading.SubscriptionCache

/**
 * `kinesis.maxBytesPerTrigger` against the fake client with records of up to 10 MiB, where a record count alone bounds
 * nothing: each shard of a batch stays within its byte share or reads a single record, so a batch passes the cap by
 * less than one record per shard it reads, and the batches together hold every record exactly once.
 */
class BytesPerTriggerSuite extends AnyFunSuite with Matchers with BeforeAndAfterEach {
  private val MiB = 1024 * 1024
  private val Shards = Seq("shardId-000000000000", "shardId-000000000001", "shardId-000000000002")

  override def afterEach(): Unit = SubscriptionCache.shared.evict(0L)

  /** A record as the tests compare them: where it is, its label and its size (never megabytes of data). */
  private type Key = (String, String, String, Int)

  private def key(shardId: String, sequenceNumber: String, data: String): Key =
    (shardId, sequenceNumber, data.takeWhile(_ != '.'), data.length)

  private def payload(label: String, n: Int): Array[Byte] = {
    val bytes = Array.fill(n)('.'.toByte)
    label.getBytes(UTF_8).copyToArray(bytes)
    bytes
  }

  /**
   * Puts records of 10 MiB, 3 MiB, 1 MiB and 100 bytes, mixed, on the three shards (raised to 10 MiB records); the
   * records put, as [[key]]s.
   */
  private def bigRecords(fake: FakeKinesisClient, clock: ManualClock, prefix: String): Seq[Key] = {
    val sizes = Seq(10 * MiB - 2, 100, 3 * MiB, 1 * MiB, 10 * MiB - 2, 100, 100, 1 * MiB)
    clock.advance(1)
    for ((shard, s) <- Shards.zipWithIndex; (size, i) <- sizes.zipWithIndex.drop(s)) yield {
      val label = s"$prefix-$s-$i"
      (shard, fake.putRecordToShard("s", shard, payload(label, size), "pk"), label, size)
    }
  }

  private def keys(rows: Seq[Out]): Seq[Key] = rows.map(o => key(o.shardId, o.sequenceNumber, o.data))

  private def fixture(): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", Shards.size)
    fake.updateMaxRecordSize("s", 10240)
    (fake, clock)
  }

  /**
   * Runs batches until none is new, checking each against its plan: a shard's rows fit in its byte share or are a
   * single record, and the batch reads at most the cap plus less than a record per shard. Each batch is read twice, as
   * a retry would, and must read the same records. Returns every batch's rows (at most `batches` batches).
   */
  private def boundedBatches(driver: MicroBatchDriver, maxBytes: Long, batches: Int = 100): Seq[Seq[Out]] =
    Iterator.continually(driver.plan()).takeWhile(_.isDefined).map(_.get).take(batches).map { end =>
      val rows = driver.read(end)
      keys(driver.read(end)) should contain theSameElementsAs keys(rows) // shards of a task interleave freely
      checkShares(end, rows, maxBytes)
      driver.stream.commit(end)
      driver.committed = end
      rows
    }.toVector

  private def checkShares(end: KinesisSourceOffset, rows: Seq[Out], maxBytes: Long): Unit = {
    val shares = end.plannedReads.map(r => r.shardId -> r.read.maxBytes.get).toMap
    shares.values.sum shouldBe maxBytes
    val byShard = rows.groupBy(_.shardId)
    byShard.foreach { case (shard, out) =>
      withClue(s"shard $shard, share ${shares(shard)}: ") {
        if (out.size > 1) out.map(_.data.length.toLong).sum should be <= shares(shard)
      }
    }
    val largest = rows.map(_.data.length).foldLeft(0)(math.max)
    rows.map(_.data.length.toLong).sum should be < maxBytes + byShard.size.toLong * largest
  }

  private def options(extra: (String, String)*): Map[String, String] =
    Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.shardsPerTask" -> "3") ++ extra

  test("given records of up to 10 MiB on three shards and kinesis.maxBytesPerTrigger of 12 MiB, when batches drain " +
    "them by polling, then each shard stays within its share or reads one record, and every record comes once") {
    val (fake, clock) = fixture()
    val all = bigRecords(fake, clock, "r")
    val driver = new MicroBatchDriver(fake, options("kinesis.maxBytesPerTrigger" -> (12 * MiB).toString), clock = clock)
    val batches = boundedBatches(driver, 12L * MiB)
    batches.size should be > 3
    keys(batches.flatten) should contain theSameElementsAs all
    driver.plan() shouldBe None
  }

  test("given the same records read through subscriptions, then the byte shares bound the batches alike") {
    val (fake, clock) = fixture()
    val all = bigRecords(fake, clock, "r")
    val driver = new MicroBatchDriver(
      fake,
      options(
        "kinesis.maxBytesPerTrigger" -> (12 * MiB).toString,
        "kinesis.consumerType" -> "EFO",
        "kinesis.consumerName" -> "q"),
      clock = clock,
      parallelism = 1)
    keys(boundedBatches(driver, 12L * MiB).flatten) should contain theSameElementsAs all
    driver.stream.stop()
  }

  test("given both kinesis.maxRecordsPerTrigger and kinesis.maxBytesPerTrigger, then Spark gets both limits and " +
    "each batch stops at whichever it reaches first") {
    val (fake, clock) = fixture()
    clock.advance(1)
    val all = (1 to 120).map { i =>
      fake.putRecordToShard("s", Shards(i % 3), payload(s"r$i", 100), "pk")
      s"r$i"
    }
    def run(maxRecords: Int, maxBytes: Int): Seq[Seq[Out]] = {
      val driver = new MicroBatchDriver(
        fake,
        options(
          "kinesis.maxRecordsPerTrigger" -> maxRecords.toString,
          "kinesis.maxBytesPerTrigger" -> maxBytes.toString),
        clock = clock)
      val limit = driver.stream.getDefaultReadLimit
      (ReadLimits.maxRecords(limit), ReadLimits.maxBytes(limit)) shouldBe ((
        Some(maxRecords.toLong),
        Some(maxBytes.toLong)))
      driver.drain()
      driver.batches.flatten.map(_.data.takeWhile(_ != '.')) should contain theSameElementsAs all
      driver.batches.toVector
    }
    val byBytes = run(maxRecords = 60, maxBytes = 1500) // 15 records of 100 bytes
    byBytes.foreach(_.size should be <= 15)
    byBytes.size shouldBe 8
    val byRecords = run(maxRecords = 30, maxBytes = 100000)
    byRecords.foreach(_.size should be <= 30)
    byRecords.size shouldBe 4
  }

  test("given a backlog of large records, when Trigger.AvailableNow runs with kinesis.maxBytesPerTrigger, then it " +
    "reads the backlog in several bounded batches, ends at its target, and leaves later records to the next run") {
    val (fake, clock) = fixture()
    val driver = new MicroBatchDriver(fake, options("kinesis.maxBytesPerTrigger" -> (12 * MiB).toString), clock = clock)
    val before = bigRecords(fake, clock, "before")
    driver.restart()
    driver.stream.prepareForTriggerAvailableNow()
    val first = boundedBatches(driver, 12L * MiB, batches = 1)
    val during = bigRecords(fake, clock, "during")
    val rest = boundedBatches(driver, 12L * MiB)
    rest.size should be > 2
    keys((first ++ rest).flatten) should contain theSameElementsAs before
    keys(driver.availableNow().flatten) should contain theSameElementsAs during
    driver.batches.foreach(_.map(_.data.length.toLong).sum should be < 12L * MiB + 3L * 10 * MiB)
  }

  test("given kinesis.maxBytesPerTrigger, when Spark asks with Trigger.Once's limit (all available), then one " +
    "batch reads it all") {
    val (fake, clock) = fixture()
    val all = bigRecords(fake, clock, "r")
    // A task reads a shard at its 2 MiB/s read limit: 26 MiB take 13 s, past the default 10 s per shard.
    val driver = new MicroBatchDriver(
      fake,
      options("kinesis.maxBytesPerTrigger" -> "1000", "kinesis.maxFetchTimePerShard" -> "60s"),
      clock = clock)
    keys(driver.runBatch(ReadLimit.allAvailable()).get) should contain theSameElementsAs all
  }
}
