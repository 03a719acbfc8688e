package io.github.sparkkinesis.source.realtime

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** How many tasks a real-time batch's source runs, from the slots the batch's shuffle stages leave: a pure rule. */
class RealTimeTasksSuite extends AnyFunSuite with Matchers {

  private def tasks(slots: BatchSlots, maxTasks: Option[Int] = None, perTask: Int = 5) =
    RealTimeTasks(perTask, maxTasks, slots)

  test("given a stateless query on 4 cores, when 4 shards are planned, then there is one task per shard") {
    tasks(BatchSlots.stateless(4)).count(4) shouldBe 4
  }

  test("given more shards than cores and no shuffle, when planned, then every slot runs a task, and never more") {
    tasks(BatchSlots.stateless(3), perTask = 2).count(7) shouldBe 3
    tasks(BatchSlots.stateless(3), perTask = 2).count(2) shouldBe 2
  }

  test("given dropDuplicates then groupBy with 1 shuffle partition each on local[4], when 4 shards are planned, " +
    "then the source takes the 2 slots the two shuffle stages leave") {
    // Spark admits the batch only if 2 Kinesis tasks + 1 + 1 shuffle tasks <= 4 slots
    val slots = BatchSlots(4, "1", Seq(1, 1))
    val count = tasks(slots).count(4)
    count shouldBe 2
    count + slots.downstream should be <= slots.slots
  }

  test("given spark.task.cpus=2 on 8 cores and a 2-partition stateful stage, when planned, then 2 tasks fit") {
    // Spark's scheduler counts slots as cores over spark.task.cpus: 8 / 2 = 4, of which the shuffle takes 2
    tasks(BatchSlots(4, "2", Seq(2))).count(10) shouldBe 2
  }

  test("given kinesis.realTime.maxTasks, when planned, then that many tasks read the shards, at most one per shard") {
    tasks(BatchSlots(16, "1", Seq(4)), maxTasks = Some(3)).count(10) shouldBe 3
    tasks(BatchSlots(16, "1", Seq(4)), maxTasks = Some(8)).count(5) shouldBe 5
  }

  test("given no readable shard, when planned, then there is no task and no slot check") {
    tasks(BatchSlots(1, "1", Seq(200))).count(0) shouldBe 0
  }

  test("given shuffle stages that take every slot, when planned, then it fails with the numbers and what to change") {
    val failure = intercept[IllegalStateException](tasks(BatchSlots(4, "1", Seq(200, 200))).count(4))
    failure.getMessage should include("needs 401 task slots at once, but the cluster has 4")
    failure.getMessage should include("1 Kinesis task reading 4 shards")
    failure.getMessage should include("400 tasks of its 2 shuffle stages (200 + 200 partitions")
    Seq("spark.sql.shuffle.partitions", "kinesis.realTime.maxTasks", "spark.task.cpus=1", "more cores")
      .foreach(failure.getMessage should include(_))
  }

  test("given kinesis.realTime.maxTasks more than the free slots, when planned, then it fails naming the option") {
    val failure = intercept[IllegalStateException](tasks(BatchSlots(4, "1", Seq(2)), maxTasks = Some(4)).count(4))
    failure.getMessage should include("needs 6 task slots at once, but the cluster has 4")
    failure.getMessage should include("4 Kinesis tasks reading 4 shards (kinesis.realTime.maxTasks=4)")
  }
}
