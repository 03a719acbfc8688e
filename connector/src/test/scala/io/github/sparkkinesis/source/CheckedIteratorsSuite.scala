package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardPosition, ShardState}
import io.github.sparkkinesis.source.planning.NewRecordsProbe
import io.github.sparkkinesis.source.reading.TaskPartition

/**
 * The driver's checks hand their iterators to the batch's tasks: a task whose shard the driver has just found records
 * in reads from the check's iterator instead of getting one, and one that expired before the task ran is replaced from
 * the task's start, with nothing lost or read twice.
 */
class CheckedIteratorsSuite extends AnyFunSuite with Matchers {
  private def shard(i: Int) = f"shardId-$i%012d"

  /**
   * A fresh query from TRIM_HORIZON over 4 shards: 3 records in each of shards 0 to 2 (shard 2's iterators meet 2 empty
   * pages before them, which the driver's check walks), none in shard 3.
   */
  private def backlog(): (ManualClock, FakeKinesisClient, MicroBatchDriver) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 4)
    for (i <- 0 to 2; n <- 1 to 3) fake.putRecordToShard("s", shard(i), s"$i-$n".getBytes(UTF_8))
    fake.emptyPagesAhead("s", shard(2), 2)
    (clock, fake, new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock))
  }

  /** Every record of the stream as rows name it (its data starts with its shard's number): each once, as a multiset. */
  private def everyRecord(fake: FakeKinesisClient): Seq[(String, String, String)] = fake.recordsOf("s").map { r =>
    val data = new String(r.data, UTF_8)
    (shard(data.head.asDigit), data, r.sequenceNumber)
  }

  /** `rows` hold every record of the stream exactly once (the 9 records, as a multiset). */
  private def everyRecordOnce(rows: Seq[Out], fake: FakeKinesisClient): Unit = {
    rows.map(r => (r.shardId, r.data, r.sequenceNumber)) should contain theSameElementsAs everyRecord(fake)
    rows should have size 9
  }

  private def partitions(driver: MicroBatchDriver, end: KinesisSourceOffset): Seq[TaskPartition] =
    driver.stream.planInputPartitions(driver.stream.deserializeOffset(driver.committed.json()), end).toSeq
      .map(_.asInstanceOf[TaskPartition])

  test("Given a fresh query over a backlog in 4 shards, one behind empty pages and one empty, when its first " +
    "batch is planned and read, then it makes one GetShardIterator per shard in all, the driver's, and reads every " +
    "record once") {
    // Given
    val (_, fake, driver) = backlog()
    // When
    val rows = driver.runBatch().get
    // Then: the driver's check of each shard got an iterator; the tasks of the 3 shards with records got none
    fake.shardIteratorCalls shouldBe 4
    everyRecordOnce(rows, fake)
  }

  test("Given a fresh query's first batch planned, when its handed iterators expire before its tasks run, then each " +
    "task gets a new iterator at its start and reads every record once") {
    // Given
    val (clock, fake, driver) = backlog()
    val end = driver.plan().get
    partitions(driver, end).flatMap(_.shards).map(_.startIterator.isDefined) shouldBe Seq(true, true, true)
    // When: more than the 5 minutes an iterator is valid for pass before the tasks run
    clock.advance(5 * 60 * 1000L + 1)
    val rows = driver.read(end)
    // Then: GetRecords answered ExpiredIteratorException once per task's shard, which got a new iterator
    fake.shardIteratorCalls shouldBe 4 + 3
    everyRecordOnce(rows, fake)
  }

  test("Given a batch planned and read but not committed, when the query restarts and reads it again, then its tasks " +
    "have no handed iterator and read the same records") {
    // Given
    val (_, fake, driver) = backlog()
    val end = driver.plan().get
    everyRecordOnce(driver.read(end), fake)
    // When
    driver.restart()
    val planned = partitions(driver, end)
    val again = driver.read(end)
    // Then
    planned.flatMap(_.shards).map(_.startIterator) shouldBe Seq(None, None, None)
    everyRecordOnce(again, fake)
  }

  test("Given checks that find records, when a task starts at the checked position, then it is handed the check's " +
    "iterator, except inside a KPL aggregate (AFTER_SUB_SEQUENCE_NUMBER) and at another position") {
    // Given shard 0 checked after its first record, shard 1 after sub-record 3 of its first record
    val (_, fake, _) = backlog()
    val Seq(first0, first1) = Seq(0, 1).map(i => fake.recordsOf("s").find(_.data.head == s"$i".head).get.sequenceNumber)
    val positions = Map(
      shard(0) -> ShardPosition.AfterSequenceNumber(first0),
      shard(1) -> ShardPosition.AfterSubSequenceNumber(first1, 3L))
    val probe = new NewRecordsProbe(fake, "s", failureTimeoutMs = 1000L, threads = 1)
    // When
    val checked = probe.check(positions.map { case (id, p) => id -> ShardState(p, Nil) }, _ => true, _ => None)
    // Then
    checked.news shouldBe positions.keySet
    fake.getRecords("s", probe.iteratorAt(shard(0), positions(shard(0))).get, 10).records.map(_.sequenceNumber) shouldBe
      fake.recordsOf("s").filter(_.data.head == '0').drop(1).map(_.sequenceNumber)
    probe.iteratorAt(shard(0), ShardPosition.TrimHorizon) shouldBe None
    probe.iteratorAt(shard(1), positions(shard(1))) shouldBe None
    probe.close()
  }
}
