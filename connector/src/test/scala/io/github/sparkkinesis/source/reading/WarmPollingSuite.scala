package io.github.sparkkinesis.source.reading

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.offsets.{ShardPosition, ShardRead}
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon
import io.github.sparkkinesis.source.MicroBatchDriver
import io.github.sparkkinesis.source.realtime.WarmShards

/**
 * A micro-batch's polling reader leaves its pages to the shard's next task on the executor: that task goes on with the
 * same iterator and waits out the shard's read limit after the last page, instead of a GetShardIterator call and a
 * throttled call at every batch boundary; a task that starts anywhere else reads with pages of its own. Simulated time:
 * the readers' clock and sleep are a manual clock.
 */
class WarmPollingSuite extends AnyFunSuite with Matchers {
  private val KiB = 1024
  private val shard = "shardId-000000000000"

  /** One shard of 12 records of `size` bytes, the i-th record's bytes all i. */
  private def backlog(clock: ManualClock, size: Int = 256 * KiB): FakeKinesisClient = {
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    (1 to 12).foreach(i => fake.putRecordToShard("s", shard, Array.fill(size)(i.toByte)))
    fake
  }

  /** 4 records (1 MiB) a page, no fetch interval: only the shard's read limit (2 MiB/s) paces the calls. */
  private val settings = ReadRateCapSuite.settings(cap = None)

  /** A first attempt of batch `batch` from `start`, at most 4 records (one page); it sleeps on the manual clock. */
  private final class Task(
      fake: KinesisClient,
      clock: ManualClock,
      warm: WarmShards,
      batch: Long,
      start: ShardPosition,
      recorded: Option[ShardEndRecord] = None,
      startIterator: Option[String] = None) {
    val reader = new ShardReader(
      TaskShard("s", shard, batch, start, None, ShardRead(Some(4L), None), startIterator = startIterator),
      recorded,
      settings,
      fake,
      clock,
      clock.advance,
      warm)

    /** Each row's first data byte, the record's number; every row handed over, then the reader closed. */
    def drain(): Seq[Int] = {
      val out = mutable.Buffer.empty[Int]
      try while (reader.next()) out += reader.get().getBinary(0).head.toInt
      finally reader.close()
      out.toVector
    }

    def end: ShardPosition = reader.endRecord.get.end
    def calls: Long = reader.endRecord.get.stats.get.getRecordsCalls
  }

  /** A shard's backlog, and the first task of it, which read records 1 to 4 (one 1-MiB page) and left its pages. */
  private def afterFirstTask(): (ManualClock, FakeKinesisClient, WarmShards, Task) = {
    val clock = new ManualClock()
    val fake = backlog(clock)
    val warm = new WarmShards()
    val first = new Task(fake, clock, warm, 0L, TrimHorizon)
    first.drain() shouldBe (1 to 4)
    warm.size shouldBe 1
    (clock, fake, warm, first)
  }

  test("given a task that read a 1-MiB page and handed every row over, when the shard's next task starts where it " +
    "ended, then it goes on with the same iterator and its first call waits the page's half second at 2 MiB/s") {
    val (clock, fake, warm, first) = afterFirstTask()

    val started = clock()
    val second = new Task(fake, clock, warm, 1L, first.end)
    second.drain() shouldBe (5 to 8)
    fake.shardIteratorCalls shouldBe 1
    clock() - started shouldBe 500L // slept by the pages taken over, which sleep as their first task's reader did
    second.calls shouldBe 1L // its own call only, not the first task's too
    fake.getRecordsCalls shouldBe 2
  }

  test("given pages left by a task, when the shard's next task starts where it ended with an iterator the driver " +
    "handed it, then it goes on with the pages left and their pacing, not with the handed iterator") {
    val (clock, fake, warm, first) = afterFirstTask()
    val handed = fake.shardIterator("s", shard, first.end.iteratorStart.get)

    val started = clock()
    val second = new Task(fake, clock, warm, 1L, first.end, startIterator = Some(handed))
    warm.size shouldBe 0
    second.drain() shouldBe (5 to 8)
    clock() - started shouldBe 500L // a reader of its own from the handed iterator would not wait for the last page
    fake.shardIteratorCalls shouldBe 2 // the first task's and the driver's (here the test's) only
  }

  test("given pages left by a task, when a replay of that task's batch starts where it began, then it reads the same " +
    "records with an iterator of its own, and the pages left are dropped") {
    val (clock, fake, warm, first) = afterFirstTask()
    val replay = new Task(fake, clock, warm, 0L, TrimHorizon, first.reader.endRecord)
    replay.drain() shouldBe (1 to 4)
    fake.shardIteratorCalls shouldBe 2
    warm.size shouldBe 1 // the replay's own pages, at the same end: the next batch may take either

    val next = new Task(fake, clock, warm, 1L, replay.end)
    next.drain() shouldBe (5 to 8)
    fake.shardIteratorCalls shouldBe 2
  }

  test("given pages left by a task on one client, when a task of the same shard and start reads through another " +
    "client, then it does not take them") {
    val clock = new ManualClock()
    val (one, other) = (backlog(clock), backlog(clock))
    val warm = new WarmShards()
    val first = new Task(one, clock, warm, 0L, TrimHorizon)
    first.drain()

    new Task(other, clock, warm, 1L, first.end).drain() shouldBe (5 to 8)
    other.shardIteratorCalls shouldBe 1
    one.getRecordsCalls shouldBe 1
  }

  test("given a task cut short before it handed every row over, when it closes, then it leaves no pages") {
    val clock = new ManualClock()
    val fake = backlog(clock)
    val warm = new WarmShards()
    val cut = new Task(fake, clock, warm, 0L, TrimHorizon)
    cut.reader.next() shouldBe true
    cut.reader.close()
    warm.size shouldBe 0
  }

  test("given a backlog read in micro-batches of 4 records, then every record comes once, in order, and the tasks " +
    "of later batches call no GetShardIterator") {
    val clock = new ManualClock()
    val fake = backlog(clock, size = 16)
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.maxRecordsPerTrigger" -> "4"),
      clock = clock)
    val first = driver.runBatch().get
    val iterators = fake.shardIteratorCalls
    val next = Seq(driver.runBatch().get, driver.runBatch().get).flatten
    fake.shardIteratorCalls shouldBe iterators // the tasks of batches 2 and 3 went on with the iterator of batch 1
    (first ++ next ++ driver.drain()).map(_.data.head.toInt) shouldBe (1 to 12)
  }
}
