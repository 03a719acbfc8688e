package io.github.sparkkinesis.source.planning

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{CountDownLatch, TimeUnit}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.source.MicroBatchDriver
import io.github.sparkkinesis.source.reading.{ParallelRows, TaskPartition}

/** Tasks that read several shards: how shards are shared out, and that each record still comes exactly once. */
class TaskPlanSuite extends AnyFunSuite with Matchers {

  private def fakeWith(shards: Int, recordsPerShard: Int): (FakeKinesisClient, Seq[String]) = {
    val fake = new FakeKinesisClient(new ManualClock())
    val ids = fake.createStream("s", shards)
    val all = for (id <- ids; i <- 1 to recordsPerShard) yield {
      fake.putRecordToShard("s", id, s"$id-$i".getBytes(UTF_8))
      s"$id-$i"
    }
    (fake, all)
  }

  test("given the shards with news and the cores, then a batch has one task per shardsPerTask shards, at least one " +
    "per core while there are enough shards, and, to read every shard at once, at most one per core") {
    val shapes = Seq((0, 5, 8), (3, 5, 8), (24, 5, 2), (24, 5, 8), (200, 5, 64), (5000, 10, 16), (7, 5, 0))
    shapes.map { case (shards, perTask, cores) => TaskPlan.taskCount(shards, perTask, cores) } shouldBe
      Seq(0, 3, 5, 8, 64, 500, 2)
    shapes.map { case (shards, perTask, cores) => TaskPlan.taskCountAtOnce(shards, perTask, cores) } shouldBe
      Seq(0, 3, 2, 8, 64, 16, 1)
  }

  test("given shards of two streams, when reads are dealt, then tasks get near-equal shares of both streams and " +
    "the read limit is split exactly") {
    val news = (0 until 6).map(i => "a" -> s"shard-$i") ++ (0 until 4).map(i => "b" -> s"shard-$i")
    val reads = TaskPlan.reads(news, Some(25L), tasks = 3, (_, _) => None)
    val byTask = reads.toSeq.flatMap { case (s, shards) => shards.toSeq.map { case (id, r) => r.task.get -> (s, id) } }
      .groupBy(_._1).map { case (t, shards) => t -> shards.map(_._2) }
    byTask.keySet shouldBe Set(0, 1, 2)
    byTask.values.map(_.size).toSeq.sorted shouldBe Seq(3, 3, 4)
    byTask.values.foreach(_.map(_._1).toSet shouldBe Set("a", "b"))
    reads.values.flatMap(_.values).flatMap(_.maxRecords).sum shouldBe 25L
  }

  test("given a byte limit, when reads are dealt, then it is split exactly like the record limit, each shard at " +
    "least one byte") {
    val news = (0 until 7).map(i => "a" -> s"shard-$i")
    val shares = TaskPlan.reads(news, Some(10L), tasks = 2, (_, _) => None, maxBytes = Some(1000L))("a").values
    shares.flatMap(_.maxBytes).sum shouldBe 1000L
    shares.flatMap(_.maxBytes).toSeq.sorted shouldBe Seq(142L, 143L, 143L, 143L, 143L, 143L, 143L)
    shares.flatMap(_.maxRecords).sum shouldBe 10L
    TaskPlan.reads(news, None, tasks = 2, (_, _) => None, maxBytes = Some(3L))("a").values.flatMap(_.maxBytes)
      .toSeq.sorted shouldBe Seq.fill(7)(1L)
  }

  test("given three executors, when reads are dealt, then each task reads shards of one home executor, whichever " +
    "other shards have news, and the tasks are shared out in proportion to each home's shards") {
    val all = (0 until 30).map(i => "s" -> f"shardId-$i%012d")
    def homesByTask(news: Seq[(String, String)], tasks: Int): Map[Int, Set[Int]] =
      TaskPlan.reads(news, None, tasks, (_, _) => None, executors = 3).toSeq
        .flatMap { case (s, shards) => shards.toSeq.map { case (id, r) => r.task.get -> TaskPlan.home(s, id, 3) } }
        .groupBy(_._1).map { case (t, homes) => t -> homes.map(_._2).toSet }
    val everyShard = homesByTask(all, tasks = 6)
    everyShard.values.foreach(_ should have size 1)
    everyShard.values.flatten.toSet shouldBe Set(0, 1, 2)
    everyShard.size shouldBe 6 +- 1
    homesByTask(all.take(7), tasks = 2).values.foreach(_ should have size 1) // fewer tasks than homes: one per home
    val skewed = (0 until 200).map(i => "s" -> s"shard-$i").filter { case (s, id) => TaskPlan.home(s, id, 3) != 2 }
      .take(17) ++ (0 until 200).map(i => "s" -> s"shard-$i").filter { case (s, id) => TaskPlan.home(s, id, 3) == 2 }
      .take(3)
    val perTask = TaskPlan.reads(skewed, None, tasks = 4, (_, _) => None, executors = 3, shardsPerTask = 5)
      .values.flatMap(_.values).groupBy(_.task.get).values.map(_.size)
    perTask.max should be <= 5 // a small home's share never packs more than shardsPerTask shards into a task
    all.map { case (s, id) => TaskPlan.home(s, id, 3) }.distinct.size shouldBe 3
  }

  test("given enhanced fan-out and two executors, when a batch is planned, then each task prefers the executor " +
    "its shards call home (a function of the shard alone, so the same in every batch); polling tasks prefer none") {
    val executors = IndexedSeq("executor_host-a_1", "executor_host-b_2")
    val (fake, _) = fakeWith(shards = 8, recordsPerShard = 3)
    def locations(options: Map[String, String]): Seq[(Set[String], Seq[String])] = {
      val driver =
        new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON") ++ options, executors = executors)
      val end = driver.plan().get
      try driver.stream.planInputPartitions(driver.committed, end).map(_.asInstanceOf[TaskPartition])
          .map(t => t.shards.map(_.shardId).toSet -> t.preferredLocations().toSeq).toSeq
      finally driver.stream.stop()
    }
    val fanOut = locations(Map("kinesis.consumerType" -> "EFO", "kinesis.consumerName" -> "q"))
    fanOut.foreach { case (shards, preferred) =>
      preferred shouldBe shards.map(id => executors(TaskPlan.home("s", id, 2))).toSeq
    }
    fanOut.flatMap(_._2).toSet shouldBe executors.toSet
    locations(Map.empty).foreach(_._2 shouldBe empty)
  }

  test("given 5 shards per task, when 20 shards with records are drained on 4 cores, then 4 tasks read 5 shards " +
    "each; when 24 are drained on 2 cores, then 2 tasks read 12 each, every shard at once; and every record comes " +
    "once, in order within its shard") {
    for ((shards, cores, perTask) <- Seq((20, 4, Seq(5, 5, 5, 5)), (24, 2, Seq(12, 12)))) {
      val (fake, all) = fakeWith(shards, recordsPerShard = 30)
      val driver = new MicroBatchDriver(
        fake,
        Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.shardsPerTask" -> "5"),
        parallelism = cores)
      val end = driver.plan().get
      val tasks = driver.stream.planInputPartitions(driver.committed, end).map(_.asInstanceOf[TaskPartition])
      tasks.map(_.shards.size).toSeq shouldBe perTask
      tasks.flatMap(_.shards.map(_.shardId)).distinct should have size shards.toLong
      val rows = driver.read(end)
      rows.map(_.data) should contain theSameElementsAs all
      rows.groupBy(_.shardId).values.foreach(shard =>
        shard.map(_.data) shouldBe shard.map(_.data).sortBy(_.split('-').last.toInt))
      driver.stream.commit(end)
      driver.committed = end
      driver.drain() shouldBe empty
    }
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

  test("given a batch read once, when more records arrive and the batch is read again, then every task reads " +
    "exactly the same records of all its shards") {
    val (fake, _) = fakeWith(shards = 6, recordsPerShard = 10)
    val driver = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.shardsPerTask" -> "3"),
      parallelism = 1)
    val end = driver.plan().get
    val first = driver.read(end)
    fake.createStream("other", 1)
    (0 until 6).foreach(i => fake.putRecordToShard("s", f"shardId-$i%012d", s"late-$i".getBytes(UTF_8)))
    driver.restart()
    driver.read(end) should contain theSameElementsAs first
    first should have size 60
  }

  test("given several readers at once, when one fails, then the task fails with its error and the others stop") {
    def rows(n: Int): PartitionReader[InternalRow] = new PartitionReader[InternalRow] {
      private var i = 0
      override def next(): Boolean = { i += 1; i <= n }
      override def get(): InternalRow = new GenericInternalRow(Array[Any](Array[Byte](1, 2)))
      override def close(): Unit = ()
    }
    val failing = new PartitionReader[InternalRow] {
      override def next(): Boolean = throw new IllegalStateException("shard gone")
      override def get(): InternalRow = null
      override def close(): Unit = ()
    }
    val ok = new ParallelRows(Seq(rows(2500), rows(10), rows(0)), "test")
    Iterator.continually(ok.next()).takeWhile(identity).size shouldBe 2510
    ok.close()
    val broken = new ParallelRows(Seq(rows(5000), failing), "test")
    intercept[IllegalStateException](while (broken.next()) {}).getMessage shouldBe "shard gone"
    broken.close()
  }

  test("given a merge, when the parents have been read to their end, then they leave the offset of the next batch " +
    "and are not read again, even after a restart") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val Seq(s0, s1) = fake.createStream("s", 2)
    fake.putRecordToShard("s", s0, "before-0".getBytes(UTF_8))
    fake.putRecordToShard("s", s1, "before-1".getBytes(UTF_8))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    driver.drain().map(_.data) should contain theSameElementsAs Seq("before-0", "before-1")
    val merged = fake.mergeShards("s", s0, s1)
    val after = (1 to 5).map { i => fake.putRecord("s", s"k$i", s"after-$i".getBytes(UTF_8)); s"after-$i" }
    driver.drain().map(_.data) should contain theSameElementsAs after
    fake.putRecord("s", "k", "later".getBytes(UTF_8))
    driver.drain().map(_.data) shouldBe Seq("later")
    val tracked = KinesisSourceOffset.fromJson(driver.committed.json()).streams("s")
    tracked.keySet shouldBe Set(merged)
    driver.restart()
    driver.drain() shouldBe empty
  }

  test("given 1,000 idle shards, when the driver looks, then one look checks at most 64 shards, the most overdue " +
    "first, so every shard is checked within 16 looks") {
    val fake = new FakeKinesisClient(new ManualClock())
    fake.createStream("s", 1000)
    val driver =
      new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = new ManualClock())
    driver.plan() shouldBe None // the first look also checks the trim horizon of every shard
    val calls = (1 to 16).map { _ =>
      val before = fake.getRecordsCalls
      driver.plan() shouldBe None
      fake.getRecordsCalls - before
    }
    calls.foreach(_ should be <= StreamPlanner.ChecksPerThread * 8)
    calls.sum should be >= 1000
  }

  test("given 200 idle shards and one record in shard 150, when Trigger.Once looks once, then it finds the record: " +
    "the first look of a run checks every shard") {
    val fake = new FakeKinesisClient(new ManualClock())
    val ids = fake.createStream("s", 200)
    fake.putRecordToShard("s", ids(150), "late".getBytes(UTF_8))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    driver.runBatch(org.apache.spark.sql.connector.read.streaming.ReadLimit.allAvailable()).map(_.map(_.data)) shouldBe
      Some(Seq("late"))
  }

  test("given a merge, when its batch's metrics are reported, then the closed parents still listed count as closed") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val Seq(s0, s1) = fake.createStream("s", 2)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    fake.mergeShards("s", s0, s1)
    fake.putRecord("s", "k", "after".getBytes(UTF_8))
    driver.drain().map(_.data) shouldBe Seq("after")
    val metrics = driver.stream.metrics(java.util.Optional.of(driver.committed))
    (metrics.get("shardsOpen"), metrics.get("shardsClosed")) shouldBe (("1", "2"))
  }
}
