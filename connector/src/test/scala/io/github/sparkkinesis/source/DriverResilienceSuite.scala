package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{
  AccessException,
  FakeKinesisClient,
  KinesisClientException,
  ManualClock,
  ResourceMissingException,
  ThrottledException
}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.reading.TaskPartition

/** The driver where AWS differs from the emulator: failing calls, the trim horizon, resharding while stopped. */
class DriverResilienceSuite extends AnyFunSuite with Matchers {

  private val s0 = "shardId-000000000000"
  private val s1 = "shardId-000000000001"

  private def fixture(shards: Int): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", shards)
    (fake, clock)
  }

  private def put(fake: FakeKinesisClient, shard: String, payloads: String*): Seq[String] = {
    payloads.foreach(p => fake.putRecordToShard("s", shard, p.getBytes(UTF_8)))
    payloads
  }

  private def trimHorizon(fake: FakeKinesisClient, clock: ManualClock, extra: (String, String)*) =
    new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON") ++ extra, clock = clock)

  test("given ListShards failing for a passing reason, then the driver goes on with its last listing") {
    val (fake, clock) = fixture(2)
    val driver = trimHorizon(fake, clock)
    val first = put(fake, s0, "a", "b")
    fake.failNextCalls("ListShards", 3)(new KinesisClientException("Connection reset (injected)"))
    driver.drain().map(_.data) should contain theSameElementsAs first
    val second = put(fake, s1, "c")
    fake.failNextCalls("ListShards", 2)(new ThrottledException("Rate exceeded (injected)"))
    driver.drain().map(_.data) shouldBe second
  }

  test("given ListShards failing for longer than kinesis.driverRetryTimeout, then the query fails naming it") {
    val (fake, clock) = fixture(1)
    val driver = trimHorizon(fake, clock, "kinesis.driverRetryTimeout" -> "5s")
    driver.plan() shouldBe None
    fake.failNextCalls("ListShards", 100000)(new KinesisClientException("Connection reset (injected)"))
    val failure = intercept[IllegalStateException] {
      (1 to 100).foreach { _ => driver.plan(); clock.advance(100) }
    }
    failure.getMessage should (include("kinesis.driverRetryTimeout") and include("Connection reset"))
  }

  test("given refused credentials, then the driver fails at once with the client's message") {
    val (fake, clock) = fixture(1)
    val driver = trimHorizon(fake, clock)
    fake.failNextCalls("ListShards", 1)(new AccessException("Kinesis refused ListShards: lacks kinesis:ListShards"))
    intercept[AccessException](driver.plan()).getMessage should include("kinesis:ListShards")
  }

  test("given checks that fail or meet a shard that just expired, then they count as no news and the next finds it") {
    val (fake, clock) = fixture(1)
    val driver = trimHorizon(fake, clock)
    driver.plan() shouldBe None
    put(fake, s0, "x")
    fake.failNextCalls("GetRecords", 2)(new KinesisClientException("HTTP 500 InternalFailure (injected)"))
    driver.plan() shouldBe None
    driver.plan() shouldBe None
    fake.failNextCalls("GetShardIterator", 1)(new ResourceMissingException("shard not found (injected)"))
    driver.plan() shouldBe None
    driver.drain().map(_.data) shouldBe Seq("x")
  }

  test("given checks of a shard failing for longer than kinesis.driverRetryTimeout, then the query fails naming it") {
    val (fake, clock) = fixture(1)
    val driver = trimHorizon(fake, clock, "kinesis.driverRetryTimeout" -> "2s")
    fake.failNextCalls("GetRecords", 100000)(new KinesisClientException("HTTP 500 InternalFailure (injected)"))
    val failure = intercept[IllegalStateException] {
      (1 to 100).foreach { _ => driver.plan(); clock.advance(100) }
    }
    failure.getMessage should (include(s0) and include("kinesis.driverRetryTimeout"))
  }

  test("given a restart after the query's position fell behind the trim horizon with records ahead of it, then " +
    "failOnDataLoss decides") {
    val (fake, clock) = fixture(1)
    val driver = trimHorizon(fake, clock, "kinesis.maxFetchRecordsPerShard" -> "2")
    put(fake, s0, "read-1", "read-2", "expired-1", "expired-2", "kept-1")
    driver.runBatch().get.map(_.data) shouldBe Seq("read-1", "read-2")
    fake.trimShard("s", s0, 4)
    driver.restart()
    intercept[IllegalStateException](driver.plan()).getMessage should
      (include("trim horizon") and include(s0) and include("kinesis.failOnDataLoss=false"))

    val lenient = new MicroBatchDriver(
      fake,
      Map(
        "kinesis.startingPosition" -> "TRIM_HORIZON",
        "kinesis.maxFetchRecordsPerShard" -> "2",
        "kinesis.failOnDataLoss" -> "false"),
      checkpoint = driver.checkpoint,
      clock = clock)
    lenient.committed = driver.committed
    lenient.restart()
    lenient.drain().map(_.data) shouldBe Seq("kept-1")
  }

  test("given a shard that was caught up and then quiet for longer than the retention period, when the query " +
    "restarts, then it warns and goes on: nothing says records were lost") {
    val (fake, clock) = fixture(1)
    val driver = trimHorizon(fake, clock)
    put(fake, s0, "read-1", "read-2")
    driver.drain()
    fake.trimShard("s", s0, 2)
    put(fake, s0, "new-1")
    driver.restart()
    driver.drain().map(_.data) shouldBe Seq("new-1")
  }

  test("given a closed shard read to its end while nothing else is new, then it is recorded as finished and its " +
    "later expiry is no data loss") {
    val (fake, clock) = fixture(1)
    val driver = trimHorizon(fake, clock)
    put(fake, s0, "a")
    driver.drain()
    fake.splitShard("s", s0, BigInt(2).pow(127))
    driver.drain() shouldBe Seq.empty
    driver.committed.streams("s")(s0).position shouldBe ShardPosition.ShardEnd
    fake.deleteShard("s", s0)
    driver.restart()
    driver.plan() shouldBe None
  }

  test("given a split and then a merge of a child with its neighbour while stopped, then no child is read before " +
    "all of its parents, across generations") {
    val (fake, clock) = fixture(2)
    val key = BigInt(2).pow(126) + 5 // in shard 0, then in the split's upper child, then in the merged shard
    def putKey(payload: String): Unit = fake.putRecord("s", "k", payload.getBytes(UTF_8), Some(key))
    val driver = trimHorizon(fake, clock)
    putKey("gen-1")
    put(fake, s1, "neighbour-1")
    driver.drain()
    driver.restart()
    // While stopped: records in every generation.
    putKey("gen-1b")
    val (_, upper) = fake.splitShard("s", s0, BigInt(2).pow(126))
    putKey("gen-2")
    put(fake, s1, "neighbour-2")
    val merged = fake.mergeShards("s", upper, s1)
    putKey("gen-3")
    driver.drain()
    val batchOf = driver.batches.zipWithIndex.flatMap { case (rows, i) => rows.map(_.data -> i) }.toMap
    batchOf("gen-1b") should be < batchOf("gen-2")
    batchOf("gen-2") should be < batchOf("gen-3")
    batchOf("neighbour-2") should be < batchOf("gen-3")
    driver.batches.flatten.filter(_.shardId == merged).map(_.data) shouldBe Seq("gen-3")
  }

  test("given a metadata path on the executors' local disks, when the driver sees no recorded end for 3 batches " +
    "in a row, then the query fails naming the fix instead of reading the same records forever") {
    val (fake, clock) = fixture(2)
    put(fake, s0, "again")
    def planWithoutEnds(driver: MicroBatchDriver): Unit = {
      val end = driver.plan().get // its tasks record where the driver cannot see: here, they never run
      driver.stream.commit(end)
      driver.committed = end
    }
    val cluster = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON"),
      clock = clock,
      metadataOnExecutorDisks = true)
    (1 to 3).foreach(_ => planWithoutEnds(cluster))
    intercept[IllegalStateException](cluster.plan()).getMessage should
      (include("none of the shard ends") and include("kinesis.metadataCommitterType=DYNAMODB"))
    // Given the same on a machine of its own (local mode), then the batch is read again: a limit() explains it.
    val local = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    (1 to 4).foreach(_ => planWithoutEnds(local))
    local.drain().map(_.data) shouldBe Seq("again")
  }

  test("given a metadata path on the executors' local disks, when the driver sees only some tasks' recorded ends " +
    "for 3 batches in a row, then the query fails naming the fix, while on a shared file system it reads them again") {
    val (fake, clock) = fixture(2)
    // Plans a batch over both shards and runs only the task of shard s0: the other records out of the driver's sight.
    def planSeeingOnlyS0(driver: MicroBatchDriver): Unit = {
      put(fake, s0, "seen")
      put(fake, s1, "unseen")
      val end = driver.plan().get
      val partitions = driver.stream.planInputPartitions(driver.committed, end).toSeq
        .map(_.asInstanceOf[TaskPartition])
      partitions should have size 2
      val factory = driver.stream.createReaderFactory()
      partitions.filter(_.shards.exists(_.shardId == s0)).foreach { partition =>
        val reader = factory.createReader(partition)
        try while (reader.next()) ()
        finally reader.close()
      }
      driver.stream.commit(end)
      driver.committed = end
    }
    val cluster = new MicroBatchDriver(
      fake,
      Map("kinesis.startingPosition" -> "TRIM_HORIZON"),
      clock = clock,
      metadataOnExecutorDisks = true)
    (1 to 3).foreach(_ => planSeeingOnlyS0(cluster))
    intercept[IllegalStateException](cluster.plan()).getMessage should
      (include("1 of the 2 shard ends") and include("local disk") and include("kinesis.metadataCommitterType=DYNAMODB"))
    // Given the same on a shared file system (a task cut short by a limit, say), then the shard is read again
    val shared = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    (1 to 4).foreach(_ => planSeeingOnlyS0(shared))
    shared.drain().map(_.data).filter(_ == "unseen") should have size 7 // 3 put in the first query's batches, 4 here
  }
}
