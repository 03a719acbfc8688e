package io.github.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.source.reading.TaskPartition

/**
 * The driver tells each task the average record of its shards, as it last saw them, so that a task sizes its first
 * pages to its share of the fetch budget by the records it will meet rather than by Kinesis' largest record.
 */
class RecordSizeHintSuite extends AnyFunSuite with Matchers {
  private def shard(i: Int) = f"shardId-$i%012d"

  private def hints(driver: MicroBatchDriver, end: KinesisSourceOffset): Map[String, Option[Long]] =
    driver.stream.planInputPartitions(driver.stream.deserializeOffset(driver.committed.json()), end).toSeq
      .flatMap(_.asInstanceOf[TaskPartition].shards).map(s => s.shardId -> s.recordBytes).toMap

  test("Given a fresh query over shards of 100-byte and 3,000-byte records, when its first batch is planned, then " +
    "each task shard carries the size of the record the driver's check found there") {
    // Given
    val fake = new FakeKinesisClient(new ManualClock())
    fake.createStream("s", 3)
    for (_ <- 1 to 3) fake.putRecordToShard("s", shard(0), new Array[Byte](100))
    for (_ <- 1 to 3) fake.putRecordToShard("s", shard(1), new Array[Byte](3000))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    // When
    val end = driver.plan().get
    // Then: shard 2, empty, is not read in this batch
    hints(driver, end) shouldBe Map(shard(0) -> Some(100L), shard(1) -> Some(3000L))
  }

  test("Given a batch that read records of 100 and 300 bytes in a shard, when the next batch is planned, then its " +
    "task shard carries the average record that batch read, not the record a check found") {
    // Given
    val fake = new FakeKinesisClient(new ManualClock())
    fake.createStream("s", 1)
    fake.putRecordToShard("s", shard(0), new Array[Byte](100))
    fake.putRecordToShard("s", shard(0), new Array[Byte](300))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    driver.runBatch().get should have size 2
    fake.putRecordToShard("s", shard(0), new Array[Byte](5000))
    // When
    val end = driver.plan().get
    // Then
    hints(driver, end) shouldBe Map(shard(0) -> Some(200L))
  }
}
