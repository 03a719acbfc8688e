package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.source.reading.TaskPartition

/**
 * Without a read limit, a run's first look checks shards a wave of `kinesis.checkNewRecordThreads` at a time until one
 * has records, and takes the shards left as news unchecked: a backlog is planned in one batch for a few driver calls,
 * the shards read empty cost their tasks what their checks would have cost the driver, and an empty stream starts no
 * batch. Under a read limit it checks every shard, so that the limit is shared only among shards with records.
 */
class FirstLookSuite extends AnyFunSuite with Matchers {
  private def shard(i: Int) = f"shardId-$i%012d"

  /** A fresh query from TRIM_HORIZON over 40 shards, 2 records in each of `backlogged`, probing on 4 threads. */
  private def fresh(backlogged: Seq[Int]): (FakeKinesisClient, MicroBatchDriver) = {
    val fake = new FakeKinesisClient(new ManualClock())
    fake.createStream("s", 40)
    for (i <- backlogged; n <- 1 to 2) fake.putRecordToShard("s", shard(i), s"$i-$n".getBytes(UTF_8))
    val options = Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.checkNewRecordThreads" -> "4")
    (fake, new MicroBatchDriver(fake, options))
  }

  private def planned(driver: MicroBatchDriver, end: KinesisSourceOffset): Seq[String] =
    driver.stream.planInputPartitions(driver.stream.deserializeOffset(driver.committed.json()), end).toSeq
      .flatMap(_.asInstanceOf[TaskPartition].shards.map(_.shardId)).sorted

  /** `rows` hold every record of the stream exactly once, as a multiset. */
  private def everyRecordOnce(rows: Seq[Out], fake: FakeKinesisClient): Unit =
    rows.map(r => (r.data, r.sequenceNumber)) should contain theSameElementsAs
      fake.recordsOf("s").map(r => (new String(r.data, UTF_8), r.sequenceNumber))

  test("Given a fresh query over a backlog in each of 40 shards, when its first batch is planned and read, then the " +
    "driver checks one wave of 4 shards, the batch reads all 40, and every record once") {
    // Given
    val (fake, driver) = fresh(0 until 40)
    // When
    val end = driver.plan().get
    val checks = fake.getRecordsCalls
    val rows = driver.read(end)
    // Then: one GetShardIterator per shard in all, the driver's for the 4 it checked, the tasks' for the others
    checks shouldBe 4
    planned(driver, end) shouldBe (0 until 40).map(shard)
    fake.shardIteratorCalls shouldBe 40
    rows should have size 80
    everyRecordOnce(rows, fake)
  }

  test("Given a fresh query over 40 shards of which only shard 9 holds records, when its first batch is planned and " +
    "read, then the driver checks waves up to shard 9's, the batch reads shard 9 and the shards after that wave, and " +
    "shard 9's records once") {
    // Given
    val (fake, driver) = fresh(Seq(9))
    // When
    val end = driver.plan().get
    val checks = fake.getRecordsCalls
    val rows = driver.read(end)
    // Then: waves of shards 0-3, 4-7 and 8-11 were checked; 12-39 went unasked
    checks shouldBe 12
    planned(driver, end) shouldBe (shard(9) +: (12 until 40).map(shard))
    rows.map(_.data) should contain theSameElementsAs Seq("9-1", "9-2")
    everyRecordOnce(rows, fake)
  }

  test("Given a fresh query over 40 shards of 100-byte records but for 3,000-byte ones in shard 2, when its first " +
    "batch is planned, then the shards it checked carry their own record's size, those left unasked the largest") {
    // Given
    val fake = new FakeKinesisClient(new ManualClock())
    fake.createStream("s", 40)
    for (i <- 0 until 40) fake.putRecordToShard("s", shard(i), new Array[Byte](if (i == 2) 3000 else 100))
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.checkNewRecordThreads" -> "4"))
    // When
    val end = driver.plan().get
    // Then
    val hints = driver.stream.planInputPartitions(driver.stream.deserializeOffset(driver.committed.json()), end).toSeq
      .flatMap(_.asInstanceOf[TaskPartition].shards).map(s => s.shardId -> s.recordBytes).toMap
    hints shouldBe (0 until 40).map(i => shard(i) -> Some(if (i == 2 || i >= 4) 3000L else 100L)).toMap
  }

  test("Given a fresh query over an empty stream of 40 shards, when it looks for its first batch, then the driver " +
    "checks every shard and starts no batch; records put later are read once") {
    // Given
    val (fake, driver) = fresh(Nil)
    // When
    val first = driver.plan()
    // Then
    first shouldBe None
    fake.getRecordsCalls shouldBe 40
    // And when a record arrives in shard 3, the next batch reads it once
    fake.putRecordToShard("s", shard(3), "3-1".getBytes(UTF_8))
    driver.runBatch().get.map(_.data) shouldBe Seq("3-1")
  }

  test("Given a fresh query with kinesis.maxRecordsPerTrigger 40 over 40 shards of which only shard 9 holds records, " +
    "when its first batch is planned, then the driver checks every shard and the batch reads shard 9 alone, 40 " +
    "records") {
    // Given
    val fake = new FakeKinesisClient(new ManualClock())
    fake.createStream("s", 40)
    for (n <- 1 to 50) fake.putRecordToShard("s", shard(9), s"9-$n".getBytes(UTF_8))
    val driver = new MicroBatchDriver(
      fake,
      Map(
        "kinesis.startingPosition" -> "TRIM_HORIZON",
        "kinesis.checkNewRecordThreads" -> "4",
        "kinesis.maxRecordsPerTrigger" -> "40"))
    // When
    val end = driver.plan().get
    val checks = fake.getRecordsCalls
    // Then: every shard checked, none read unchecked to take a share of the limit
    checks shouldBe 40
    planned(driver, end) shouldBe Seq(shard(9))
    driver.read(end) should have size 40
  }

  test("Given an AvailableNow run over a backlog in each of 40 shards, when its first batch is planned, then the " +
    "driver checks every shard (the run must not end while one is unchecked) and the run reads every record once") {
    // Given
    val (fake, driver) = fresh(0 until 40)
    driver.restart()
    driver.stream.prepareForTriggerAvailableNow()
    // When
    driver.plan().get
    // Then
    fake.getRecordsCalls shouldBe 40
    everyRecordOnce(driver.availableNow().flatten, fake)
  }
}
