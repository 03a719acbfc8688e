package io.github.sparkkinesis.source.planning

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{CountDownLatch, TimeUnit}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.source.MicroBatchDriver
import io.github.sparkkinesis.source.reading.{ParallelRows, TaskPartition}

/**
 * A micro-batch reads every shard it plans at once: never more tasks than the cluster has slots, and every shard of a
 * task on a thread of its own, so that no shard waits idle for a later wave of tasks or a free thread.
 */
class ShardsAtOnceSuite extends AnyFunSuite with Matchers {

  test("given more shards than shardsPerTask times the slots, when tasks are counted, then there is one per slot") {
    TaskPlan.taskCountAtOnce(shards = 0, shardsPerTask = 5, slots = 2) shouldBe 0
    TaskPlan.taskCountAtOnce(shards = 3, shardsPerTask = 5, slots = 8) shouldBe 3
    TaskPlan.taskCountAtOnce(shards = 24, shardsPerTask = 5, slots = 8) shouldBe 8
    TaskPlan.taskCountAtOnce(shards = 60, shardsPerTask = 5, slots = 16) shouldBe 16
    TaskPlan.taskCountAtOnce(shards = 24, shardsPerTask = 5, slots = 2) shouldBe 2
    TaskPlan.taskCountAtOnce(shards = 5000, shardsPerTask = 10, slots = 16) shouldBe 16
    TaskPlan.taskCountAtOnce(shards = 7, shardsPerTask = 5, slots = 0) shouldBe 1
  }

  test("given 24 shards with records, 5 shards per task and 2 cores, when a batch is planned, then 2 tasks read 12 " +
    "shards each and every record comes once") {
    val fake = new FakeKinesisClient(new ManualClock())
    val ids = fake.createStream("s", 24)
    val all = for (id <- ids; i <- 1 to 20) yield {
      fake.putRecordToShard("s", id, s"$id-$i".getBytes(UTF_8))
      s"$id-$i"
    }
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.shardsPerTask" -> "5"),
      parallelism = 2)
    val end = driver.plan().get
    val tasks = driver.stream.planInputPartitions(driver.committed, end).map(_.asInstanceOf[TaskPartition])
    tasks.map(_.shards.size).toSeq shouldBe Seq(12, 12)
    driver.read(end).map(_.data) should contain theSameElementsAs all
  }

  test("given a task of 12 shards, when it is read, then all 12 are read at once, each on a thread of its own") {
    val started = new CountDownLatch(12)
    def reader(shard: Int): PartitionReader[InternalRow] = new PartitionReader[InternalRow] {
      private var read = 0
      override def next(): Boolean = {
        if (read == 0) {
          started.countDown()
          // Only a thread of its own per shard lets all 12 reach this point while none has finished.
          if (!started.await(10, TimeUnit.SECONDS)) throw new IllegalStateException(s"shard $shard read alone")
        }
        read += 1
        read <= 3
      }
      override def get(): InternalRow = new GenericInternalRow(Array[Any](Array[Byte](shard.toByte)))
      override def close(): Unit = ()
    }
    val rows = new ParallelRows((0 until 12).map(reader), "test")
    try {
      val shards = Iterator.continually(rows.next()).takeWhile(identity).map(_ => rows.get().getBinary(0).head).toSeq
      shards.groupBy(identity).map { case (shard, seen) => shard -> seen.size } shouldBe (0 until 12)
        .map(_.toByte -> 3).toMap
    } finally rows.close()
  }
}
