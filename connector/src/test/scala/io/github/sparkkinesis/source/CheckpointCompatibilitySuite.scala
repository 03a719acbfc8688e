package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.metadata.{AtomicFiles, ShardEndRecord}
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardPosition, ShardState}

/** A checkpoint written by 0.1.0 (offsets and shard-end records of version 1) restarts with this version. */
class CheckpointCompatibilitySuite extends AnyFunSuite with Matchers {

  test("given a 0.1.0 checkpoint with a committed batch, when the query restarts, then it goes on after the " +
    "recorded ends, every record once") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val Seq(s0, s1) = fake.createStream("s", 2)
    val read0 = fake.putRecordToShard("s", s0, "read-0".getBytes(UTF_8))
    val read1 = fake.putRecordToShard("s", s1, "read-1".getBytes(UTF_8))
    // Given: what 0.1.0 left after batch 0 read one record of each shard
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    val batch0 = KinesisSourceOffset(
      0L,
      Map("s" -> Map(
        s0 -> ShardState(ShardPosition.TrimHorizon, Nil),
        s1 -> ShardState(ShardPosition.TrimHorizon, Nil))))
    batch0.json() should include("\"version\":1")
    Seq(s0 -> read0, s1 -> read1).foreach { case (shard, last) =>
      val v1 = ShardEndRecord("s", shard, 0L, ShardPosition.TrimHorizon, ShardPosition.AfterSequenceNumber(last), 1L)
      v1.toJson should include("\"version\":1")
      // 0.1.0's layout: one file per stream, batch and shard
      AtomicFiles.publishIfAbsent(
        new Path(driver.checkpoint, s"shard-ends/s/0/$shard.json"),
        v1.toJson,
        new Configuration())
    }
    driver.committed = KinesisSourceOffset.fromJson(batch0.json())
    val later = Seq("later-0", "later-1", "later-2").map { p => fake.putRecord("s", p, p.getBytes(UTF_8)); p }
    // When: this version restarts from it
    driver.restart()
    // Then: the records after the recorded ends, once each
    driver.drain().map(_.data) should contain theSameElementsAs later
  }
}
