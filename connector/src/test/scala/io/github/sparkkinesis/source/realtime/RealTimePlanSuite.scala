package io.github.sparkkinesis.source.realtime

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.metadata.{ReadStats, ShardEndRecord}
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardState}
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, ShardEnd, TrimHorizon}

/** Planning a real-time batch, deciding who reads a child shard, and merging the tasks' positions: pure rules. */
class RealTimePlanSuite extends AnyFunSuite with Matchers {

  private def open(ids: String*): Map[String, ShardState] = ids.map(_ -> ShardState(TrimHorizon, Nil)).toMap

  private def plan(tracked: Map[String, Map[String, ShardState]], perTask: Int = 5, cores: Int = 2): RealTimePlan =
    RealTimePlan(
      7L,
      tracked,
      RealTimeTasks(perTask, None, BatchSlots.stateless(cores)),
      (_, _) => Map.empty,
      _ => Set.empty)

  private def end(stream: String, id: String, at: String, count: Long = 1L) =
    ShardEndRecord(
      stream,
      id,
      7L,
      TrimHorizon,
      AfterSequenceNumber(at),
      count,
      Some(ReadStats(0L, false, false, None, 1L, 2L, 0L)))

  test("given more readable shards than cores, when a real-time batch is planned, then it has one task per core") {
    val p = plan(Map("s" -> open("a", "b", "c", "d", "e", "f", "g")), perTask = 2, cores = 3)
    p.partitions.map(_.task) shouldBe Seq(0, 1, 2)
    p.partitions.flatMap(_.shards.map(_.shardId)).sorted shouldBe Seq("a", "b", "c", "d", "e", "f", "g")
    p.partitions.map(_.shards.size) shouldBe Seq(3, 2, 2)
  }

  test("given few shards, when planned, then each task reads shards of every stream and none waits on a parent") {
    val tracked = Map(
      "s" -> (open("a", "b") + ("c" -> ShardState(TrimHorizon, Seq("a")))),
      "t" -> (open("x") + ("y" -> ShardState(ShardEnd, Nil))))
    val p = plan(tracked, cores = 8)
    val read = p.partitions.flatMap(_.shards.map(s => s.stream -> s.shardId)).toSet
    read shouldBe Set("s" -> "a", "s" -> "b", "t" -> "x")
    p.partitions.head.lineage.finished shouldBe Set(ShardRef("t", "y"))
    p.partitions.head.lineage.slot(ShardRef("s", "a")).get should be >= RealTimeLineage.SlotBase
  }

  test("given the tasks' reports, when merged, then read shards move, found children wait for parents, others stay") {
    val tracked = Map("s" -> (open("a", "b") + ("w" -> ShardState(TrimHorizon, Seq("b")))))
    val p = plan(tracked)
    val reports = Seq(
      RealTimeTaskOffset(
        0,
        Seq(end("s", "a", "5").copy(end = ShardEnd), end("s", "c", "9")),
        Map(
          ShardRef("s", "c") -> Seq("a"))),
      RealTimeTaskOffset(1, Seq(end("s", "b", "6")), Map.empty))
    val offset = p.endOffset(reports)
    offset.batch shouldBe 7L
    offset.streams("s") shouldBe Map(
      "a" -> ShardState(ShardEnd, Nil),
      "b" -> ShardState(AfterSequenceNumber("6"), Nil),
      "c" -> ShardState(AfterSequenceNumber("9"), Seq("a")),
      "w" -> ShardState(TrimHorizon, Seq("b")))
    offset.plannedReads shouldBe empty
    KinesisSourceOffset.fromJson(offset.json()) shouldBe offset
    p.endsByStream(reports)("s").map(_.shardId).sorted shouldBe Seq("a", "b", "c")
  }

  test("given a task that never reported, when merged, then its shards stay where the batch started") {
    val p = plan(Map("s" -> open("a", "b")))
    p.endOffset(Seq(RealTimeTaskOffset(0, Seq(end("s", "a", "3")), Map.empty))).streams("s")("b") shouldBe
      ShardState(TrimHorizon, Nil)
  }

  private val lineage = RealTimeLineage(
    Map(ShardRef("s", "a") -> 0, ShardRef("s", "b") -> 1, ShardRef("s", "c") -> 0),
    Set(ShardRef("s", "old")))

  private def local(ids: String*): Set[ShardRef] = ids.map(ShardRef("s", _)).toSet

  test("given a split child, when its parent's task asks, then that task reads it after the parent") {
    lineage.readerOf(ShardRef("s", "a1"), Seq("a"), 0, local("a")) shouldBe
      ChildReader.ThisTask(Seq(ShardRef("s", "a")))
  }

  test("given a merge across tasks, when each parent's task asks, then only the first parent's task reads the child") {
    val parents = Seq("b", "a")
    lineage.readerOf(ShardRef("s", "ab"), parents, 0, local("a", "c")) shouldBe
      ChildReader.ThisTask(Seq(ShardRef("s", "a"), ShardRef("s", "b")))
    lineage.readerOf(ShardRef("s", "ab"), parents, 1, local("b")) shouldBe ChildReader.Other
  }

  test("given a merge with a parent finished before the batch, when asked, then only the other parent counts") {
    lineage.readerOf(ShardRef("s", "bo"), Seq("old", "b"), 1, local("b")) shouldBe
      ChildReader.ThisTask(Seq(ShardRef("s", "b")))
  }

  test("given a parent no task of the batch planned, when asked, then the next batch reads the child") {
    lineage.readerOf(ShardRef("s", "xc"), Seq("x", "c"), 0, local("a", "c")) shouldBe ChildReader.NextBatch
  }

  test("given a child already taken on or planned, when asked again, then nobody else reads it") {
    lineage.readerOf(ShardRef("s", "a1"), Seq("a"), 0, local("a", "a1")) shouldBe ChildReader.Other
    lineage.readerOf(ShardRef("s", "c"), Seq("a"), 0, local("a")) shouldBe ChildReader.Other
  }
}
