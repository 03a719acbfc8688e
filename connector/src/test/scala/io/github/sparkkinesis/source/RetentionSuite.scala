package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.ShardPosition.AtSequenceNumber
import io.github.sparkkinesis.source.reading.ShardReader

/**
 * Restarts after the retention period and positions near the trim horizon, where AWS answers with empty pages for many
 * minutes: modelled in the fake client, driven as Spark drives the source.
 */
class RetentionSuite extends AnyFunSuite with Matchers {

  private val shard = "shardId-000000000000"
  private val retentionMs = 24L * 3600 * 1000

  private def fixture(): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    (fake, clock)
  }

  private def put(fake: FakeKinesisClient, prefix: String, n: Int): Seq[String] =
    (1 to n).map { i => fake.putRecordToShard("s", shard, s"$prefix-$i".getBytes(UTF_8)); s"$prefix-$i" }

  private val fromHorizon = Map("kinesis.startingPosition" -> "TRIM_HORIZON")

  /** A batch planned and read (its ends recorded) but never committed: the query stopped in the middle of it. */
  private def plannedNotCommitted(driver: MicroBatchDriver) = {
    val end = driver.plan().get
    driver.read(end)
    end
  }

  test("given a batch planned before a stop that outlasted retention, when the query restarts with " +
    "failOnDataLoss=true, then planning the batch again fails once, saying what was lost and what to do") {
    val (fake, clock) = fixture()
    put(fake, "old", 5)
    val driver = new MicroBatchDriver(fake, fromHorizon, clock = clock)
    val end = plannedNotCommitted(driver)
    clock.advance(retentionMs)
    put(fake, "new", 3)
    fake.trimShard("s", shard, 5)
    driver.restart()
    val message = intercept[IllegalStateException](driver.read(end)).getMessage
    message should (include("Batch 0") and include(s"s/$shard: 5 record(s)") and include("trimmed") and
      include("kinesis.failOnDataLoss=false") and include("same checkpoint"))
    fake.getRecordsCalls should be < 20 // decided by the driver's look at the horizon, not by failing tasks
  }

  test("given that failure, when the query restarts on the same checkpoint with failOnDataLoss=false, then the " +
    "batch reads nothing, and the query goes on from the trim horizon, exactly once") {
    val (fake, clock) = fixture()
    put(fake, "old", 5)
    val first = new MicroBatchDriver(fake, fromHorizon, clock = clock)
    val end = plannedNotCommitted(first)
    clock.advance(retentionMs)
    val kept = put(fake, "new", 3)
    fake.trimShard("s", shard, 5)
    first.restart()
    intercept[IllegalStateException](first.read(end))

    val recovered = new MicroBatchDriver(
      fake,
      fromHorizon ++ Map("kinesis.failOnDataLoss" -> "false"),
      checkpoint = first.checkpoint,
      clock = clock)
    recovered.read(end) shouldBe empty
    recovered.read(end) shouldBe empty // any later attempt reads the same (nothing)
    recovered.stream.commit(end)
    recovered.committed = end
    recovered.drain().map(_.data) shouldBe kept
    val later = put(fake, "later", 2)
    recovered.drain().map(_.data) shouldBe later
  }

  test("given a replayed batch whose oldest records were trimmed but whose recorded end is still there, then " +
    "failOnDataLoss=true fails the replay saying how many are gone, and false reads what is left") {
    val (fake, clock) = fixture()
    put(fake, "old", 5)
    val driver = new MicroBatchDriver(fake, fromHorizon, clock = clock)
    val end = plannedNotCommitted(driver)
    fake.trimShard("s", shard, 2)
    driver.restart()
    intercept[IllegalStateException](driver.read(end)).getMessage should (include("2 of the 5 records") and
      include("kinesis.failOnDataLoss=false"))

    val recovered = new MicroBatchDriver(
      fake,
      fromHorizon ++ Map("kinesis.failOnDataLoss" -> "false"),
      checkpoint = driver.checkpoint,
      clock = clock)
    recovered.read(end).map(_.data) shouldBe Seq("old-3", "old-4", "old-5")
  }

  test("given a replayed batch and nothing trimmed, when read again after a restart, then it yields the same rows") {
    val (fake, clock) = fixture()
    put(fake, "old", 5)
    val driver = new MicroBatchDriver(fake, fromHorizon, clock = clock)
    val end = driver.plan().get
    val rows = driver.read(end)
    put(fake, "new", 3)
    driver.restart()
    driver.read(end) shouldBe rows
  }

  test("given empty pages about the retention period behind the tip before the first record, when a task reads, " +
    "then it walks at most its budget of them and ends the shard where it began") {
    val (fake, clock) = fixture()
    put(fake, "r", 3)
    val driver = new MicroBatchDriver(fake, fromHorizon, clock = clock)
    // The driver found news (a check of a shard with records); then Kinesis answers from near the trim horizon, and
    // the check's iterator, which the task was handed, expires before the task runs: the task's new one meets them.
    val end = driver.plan().get
    fake.emptyPagesAhead("s", shard, 100000, millisBehindLatest = Some(retentionMs))
    fake.expireNextIterator()
    val before = fake.getRecordsCalls
    driver.read(end) shouldBe empty
    fake.getRecordsCalls - before shouldBe 1 + ShardReader.EmptyPagesPerTask
  }

  test("given a shard that needs many empty pages before its first record, when the query runs, then the driver's " +
    "walk goes on from look to look, the shard moves to that record, and no task walks the pages again") {
    val (fake, clock) = fixture()
    val records = put(fake, "r", 4)
    fake.emptyPagesAhead("s", shard, 600, millisBehindLatest = Some(retentionMs))
    val driver = new MicroBatchDriver(fake, fromHorizon, clock = clock)
    val rows = Iterator.continually(driver.runBatch()).take(400).flatten.find(_.nonEmpty)
    rows.map(_.map(_.data)) shouldBe Some(records)
    driver.committed.streams("s")(shard).position shouldBe a[AtSequenceNumber]
    fake.getRecordsCalls should be < 700 // one walk of 600 pages, not one per look or per task
  }

  test("given a sparse shard that needs thousands of empty pages before its first record, when Trigger.AvailableNow " +
    "runs from TRIM_HORIZON, then the walk goes on from look to look past kinesis.driverRetryTimeout and the run " +
    "reads the records and ends") {
    val (fake, clock) = fixture()
    val records = put(fake, "r", 3)
    fake.emptyPagesAhead("s", shard, 3000, millisBehindLatest = Some(retentionMs))
    fake.eachGetRecordsTakes(200) // 3000 pages take 10 minutes: five times the default kinesis.driverRetryTimeout
    val driver = new MicroBatchDriver(fake, fromHorizon, clock = clock)
    driver.availableNow().flatten.map(_.data) shouldBe records
    fake.getRecordsCalls should be < 3100 // one walk: the task starts at the record the walk reached
    val later = put(fake, "later", 2)
    driver.availableNow().flatten.map(_.data) shouldBe later
  }
}
