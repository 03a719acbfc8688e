package io.github.sparkkinesis.source.planning

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.metadata.{HadoopShardEndStore, ReadStats, ShardEndRecord}
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardState}
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, AfterSubSequenceNumber}

/**
 * What the driver's retention checks need: a position inside a KPL aggregate, whose rest is a record to read, and where
 * real-time batches ended with records ahead.
 */
class RetentionChecksSuite extends AnyFunSuite with Matchers {

  private val inside = AfterSubSequenceNumber("5", 1L)

  test("given a position inside an aggregate that has expired, when the trim horizon is checked, then its records " +
    "not handed over are surely lost") {
    val tracked = Map("a" -> ShardState(inside, Nil), "b" -> ShardState(AfterSequenceNumber("5"), Nil))
    TrimHorizonCheck.candidates(tracked) shouldBe Seq("a", "b")
    TrimHorizonCheck.behind(tracked, Map("a" -> "7", "b" -> "7"), Map.empty) shouldBe Seq(
      TrimHorizonCheck.Behind("a", inside, "7", surelyLost = true),
      TrimHorizonCheck.Behind("b", AfterSequenceNumber("5"), "7", surelyLost = false))
    TrimHorizonCheck.behind(tracked, Map("a" -> "5"), Map.empty) shouldBe empty // the aggregate is still retained
  }

  test("given a batch planned before a restart that starts inside an expired aggregate and recorded no end, when it " +
    "is planned again, then its start is lost") {
    val offset = KinesisSourceOffset(3L, Map("s" -> Map("a" -> ShardState(inside, Nil))))
    val records = Map(("s", "a") -> None)
    ReplayCheck.candidates(offset, records) shouldBe Map("s" -> Seq("a"))
    ReplayCheck.lost(offset, records, Map(("s", "a") -> Some("7"))).map(l => (l.shardId, l.start)) shouldBe
      Seq("a" -> inside)
    ReplayCheck.lost(offset, records, Map(("s", "a") -> Some("5"))) shouldBe empty
  }

  test("given a real-time batch of 600 shards, when the driver records where records lay ahead, then a restart finds " +
    "them all, in records of a bounded size, and nothing of the shards that were caught up") {
    val store = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())
    val ends = new BatchEnds(store)
    def end(i: Int, lagMs: Long) = ShardEndRecord(
      "s",
      f"shard-$i%04d",
      4L,
      AfterSequenceNumber("1"),
      AfterSequenceNumber(s"$i"),
      1L,
      Some(ReadStats(lagMs, false, false, None, 1L, 1L, 0L)))
    val behind = (0 until 600).map(end(_, 1000L))
    ends.recordRealTime(4L, behind :+ end(600, 0L))
    val offset =
      KinesisSourceOffset(4L, Map("s" -> (behind :+ end(600, 0L)).map(e => e.shardId -> ShardState(e.end, Nil)).toMap))
    ends.ofRealTime(offset).values.toSet shouldBe behind.toSet
    store.get(4L, BatchEnds.RealTimeTask).get.ends should have size BatchEnds.RealTimeShardsPerRecord.toLong
    ends.ofRealTime(offset.copy(batch = 5L)) shouldBe empty
  }
}
