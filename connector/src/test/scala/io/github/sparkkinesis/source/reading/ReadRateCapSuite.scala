package io.github.sparkkinesis.source.reading

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.{HadoopShardEndStore, ShardEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon
import io.github.sparkkinesis.source.MicroBatchDriver

/**
 * `kinesis.getRecords.maxBytesPerSecondPerShard`: a polling reader paces its GetRecords calls by the bytes of the last
 * page, measured in simulated time (the reader's clock and sleep are a manual clock), never by sleeping.
 */
class ReadRateCapSuite extends AnyFunSuite with Matchers {
  import ReadRateCapSuite.settings

  private val KiB = 1024
  private val shard = "shardId-000000000000"

  /** One shard holding `records` records of `size` bytes each, on a fake client of `clock`. */
  private def shardOf(records: Int, size: Int, clock: ManualClock = new ManualClock()): FakeKinesisClient = {
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    (1 to records).foreach(i => fake.putRecordToShard("s", shard, Array.fill(size)(i.toByte)))
    fake
  }

  /** Each call's instant (simulated) and bytes, from the start of the shard to its tip. */
  private def callsToTip(cap: Option[Long], fetchIntervalMs: Long, perFetch: Int): Seq[(Long, Long)] = {
    val clock = new ManualClock()
    val fake = shardOf(records = 40, size = 64 * KiB, clock)
    val pages = new PollingPages(
      fake,
      "s",
      shard,
      TrimHorizon,
      perFetch,
      fetchIntervalMs,
      new Backoff(1L, 2L),
      failureTimeoutMs = 1000L,
      clock,
      clock.advance,
      maxBytesPerSecond = cap)
    val calls = mutable.Buffer.empty[(Long, Long)]
    var atTip = false
    while (!atTip) {
      val page = pages.fetch(Long.MaxValue, perFetch).get
      // The fake answers at once: clock() is when the call was made.
      calls += (clock() -> page.records.map(_.data.length.toLong).sum)
      atTip = page.millisBehindLatest == 0
    }
    calls.toVector
  }

  test("given a page's bytes and a rate, then the next call waits those bytes at that rate, rounded up to the ms") {
    def records(sizes: Int*) = sizes.map(n => KinesisRecord(Array.fill(n)(0.toByte), "pk", "1", 0L))
    PollingPages.pacingMs(records(512 * KiB, 512 * KiB), 1024L * KiB) shouldBe 1000L
    PollingPages.pacingMs(records(10 * 1024 * KiB), 2048L * KiB) shouldBe 5000L
    PollingPages.pacingMs(records(1), 1024L * KiB) shouldBe 1L
    PollingPages.pacingMs(Nil, 1024L) shouldBe 0L
  }

  test("given a backlog of 2.5 MiB and a cap of 512 KiB/s, when a reader drains it, then each call waits for the " +
    "last page's bytes at that rate and no span from a call on reads more than the rate allows plus one page") {
    // Given 40 records of 64 KiB, read 4 to a page (256 KiB), with no fetch interval
    val capped = callsToTip(Some(512L * KiB), fetchIntervalMs = 0L, perFetch = 4)
    // Then each call comes 500 ms after the one before (256 KiB at 512 KiB/s)
    capped.size shouldBe 10
    capped.sliding(2).foreach { case Seq((at, bytes), (next, _)) => next - at shouldBe bytes * 1000 / (512 * KiB) }
    // And from any call on, the bytes of the calls up to a later one stay within the rate plus that call's page
    for (i <- capped.indices; j <- i until capped.size) {
      val bytes = capped.slice(i, j + 1).map(_._2).sum
      bytes should be <= (capped(j)._1 - capped(i)._1) * 512 * KiB / 1000 + capped(j)._2
    }
    // While without the option the same reader paces at the shard's own read limit, 2 MiB/s (256 KiB: 125 ms)
    callsToTip(None, fetchIntervalMs = 0L, perFetch = 4).sliding(2).foreach {
      case Seq((at, _), (next, _)) => next - at shouldBe 125L
    }
    // And a fetch interval longer than the pacing still spaces the calls
    callsToTip(Some(512L * KiB), fetchIntervalMs = 800L, perFetch = 4).sliding(2).foreach {
      case Seq((at, _), (next, _)) => next - at shouldBe 800L
    }
  }

  test("given no cap and a 10-MiB page, as AWS serves a backlog of 1-KiB records, when the reader reads on, then its " +
    "next call comes 5 s later, when Kinesis would serve it, not earlier into ProvisionedThroughputExceeded") {
    // Given 10,000 records of 1 KiB in the shard (AWS's largest page by records, 9.77 MiB)
    val clock = new ManualClock()
    val fake = shardOf(records = 10001, size = KiB, clock)
    val pages =
      new PollingPages(fake, "s", shard, TrimHorizon, 10000, 200L, new Backoff(1L, 2L), 1000L, clock, clock.advance)
    // When it reads the page and then the next
    val start = clock()
    pages.fetch(Long.MaxValue, 10000).get.records should have size 10000
    pages.msUntilPaced shouldBe 0L // a task's own pacing: the shard's next task is not held back
    pages.fetch(Long.MaxValue, 10000).get.records should have size 1
    // Then the second call waited out the first page's bytes at the shard's limit
    clock() - start shouldBe 4883L
  }

  test(
    "given a 10-MiB page that took 3 s to transfer after Kinesis answered, when the reader reads on, then its next " +
      "call comes 5 s after the answer, when Kinesis serves it, not 5 s after the transfer ended") {
    // Given 10,000 records of 1 KiB in the shard, each call taking 3 s after its answer came
    val clock = new ManualClock()
    val fake = shardOf(records = 10001, size = KiB, clock)
    fake.eachGetRecordsTakes(3000L, afterAnswerMs = 3000L)
    val pages =
      new PollingPages(fake, "s", shard, TrimHorizon, 10000, 200L, new Backoff(1L, 2L), 1000L, clock, clock.advance)
    // When it reads the page and then the next
    val answered = clock()
    pages.fetch(Long.MaxValue, 10000).get.records should have size 10000
    pages.fetch(Long.MaxValue, 10000).get.records should have size 1
    // Then the second call started 4,883 ms after the first answer (the page's bytes at 2 MiB/s) and took 3 s itself
    clock() - answered shouldBe 4883L + 3000L
  }

  test("given the reader settings every task shares, then the pages every reader opens (micro-batch, batch read, " +
    "real-time) pace their calls by the cap") {
    val clock = new ManualClock()
    val fake = shardOf(records = 8, size = 100 * KiB, clock)
    val start = clock()
    val pages = ShardPages.open(
      fake,
      TaskShard("s", shard, 0L, TrimHorizon, None),
      settings(cap = Some(200L * KiB)),
      clock,
      clock.advance)
    pages.fetch(Long.MaxValue, 2).get.records should have size 2
    pages.msUntilPaced shouldBe 1000L
    clock.advance(400L)
    pages.msUntilPaced shouldBe 600L
    pages.fetch(Long.MaxValue, 2).get.records should have size 2
    clock() shouldBe start + 1000L // the second call waited out the rest of the first page's second
  }

  test("given a cap that puts the next call past the task's time limit, when a micro-batch task reads, then it " +
    "stops after the page without waiting, and records how long the cap still holds the shard back") {
    val clock = new ManualClock()
    val fake = shardOf(records = 10, size = 100 * KiB, clock)
    val store = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())
    val partition = TaskPartition(0L, 0, Seq(TaskShard("s", shard, 0L, TrimHorizon, None)))
    val reader = new TaskReader(partition, settings(cap = Some(4L * KiB)), store, fake, clock, clock.advance)
    val startedAt = clock()
    Iterator.continually(reader.next()).takeWhile(identity).size shouldBe 4
    reader.close()
    // 400 KiB at 4 KiB/s: the next call may come 100 s after the first, past the 60 s limit, so the task ends at once
    clock() shouldBe startedAt
    val end = store.get(0L, 0).get.ends.head
    end.recordCount shouldBe 4
    end.stats.map(s => (s.moreAvailable, s.pacedMs)) shouldBe Some((true, 100000L))
    ShardEndRecord.fromJson(end.toJson, "in the test") shouldBe end
  }

  test("given a cap, when micro-batches drain a shard, then the driver reads it again only once the cap allows, " +
    "and every record comes once") {
    // Given 10 records of 100 KiB, read 2 to a page (200 KiB), capped at 1 KiB/s: each page holds the shard 200 s
    val clock = new ManualClock()
    val fake = shardOf(records = 10, size = 100 * KiB, clock)
    val driver = new MicroBatchDriver(
      fake,
      Map(
        "kinesis.startingPosition" -> "TRIM_HORIZON",
        "kinesis.getRecords.numberOfRecordsPerFetch" -> "2",
        "kinesis.getRecords.maxBytesPerSecondPerShard" -> KiB.toString),
      clock = clock)
    // When the first batch reads a page and stops (the cap allows no second call within the task's 10 s)
    driver.runBatch().get should have size 2
    // Then the driver plans no batch until the page's 200 s have passed (the tasks' clock is the real one, and a
    // little of it passes while they run: hence the margins)
    driver.plan() shouldBe None
    clock.advance(150000L)
    driver.plan() shouldBe None
    clock.advance(60000L)
    driver.runBatch().get should have size 2
    // And the rest comes in batches as the cap allows, each record once
    while (driver.batches.size < 5) {
      clock.advance(210000L)
      driver.runBatch()
    }
    driver.batches.flatten.map(_.sequenceNumber) shouldBe fake.recordsOf("s").map(_.sequenceNumber)
  }
}

object ReadRateCapSuite {

  /** Polling reader settings with the rate cap `cap`: 4 records a page, 60 s per task, no fetch interval. */
  def settings(cap: Option[Long]): ReaderSettings = ReaderSettings(
    ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
    recordsPerFetch = 4,
    fetchIntervalMs = 0L,
    maxRecordsPerShard = 100000L,
    maxTimePerShardMs = 60000L,
    retryBaseMs = 1L,
    retryMaxMs = 2L,
    dropMisroutedRecords = false,
    maxBytesPerSecondPerShard = cap)
}
