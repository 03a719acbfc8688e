package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock, ResourceMissingException}

class KinesisMicroBatchStreamSuite extends AnyFunSuite with Matchers {

  private def put(fake: FakeKinesisClient, keys: Seq[String], prefix: String = "v"): Seq[String] =
    keys.map { k => fake.putRecord("s", k, s"$prefix-$k".getBytes(UTF_8)); s"$prefix-$k" }

  private def newFake(shards: Int): FakeKinesisClient = {
    val fake = new FakeKinesisClient()
    fake.createStream("s", shards)
    fake
  }

  private val keys = (1 to 40).map(i => s"key-$i")

  test("given records in two shards and TRIM_HORIZON, when drained, then each record comes once and then no batch") {
    val fake = newFake(2)
    val expected = put(fake, keys)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    driver.drain().map(_.data) should contain theSameElementsAs expected
    driver.batches should have size 1
    driver.plan() shouldBe None
  }

  test("given an idle stream, when the driver checks repeatedly, then it starts no batch") {
    val fake = newFake(2)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    (1 to 5).foreach(_ => driver.plan() shouldBe None)
    // Before the first batch "nothing new" is no offset at all: Spark would run a batch for any offset then.
    driver.stream.latestOffset(driver.committed, ReadLimit.allAvailable()) shouldBe null
    put(fake, Seq("late"))
    driver.runBatch().map(_.map(_.data)) shouldBe Some(Seq("v-late"))
  }

  test("given LATEST, then records put before the query starts are skipped and later ones read") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 2)
    put(fake, keys, "old")
    clock.advance(10)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "LATEST"), clock = clock)
    driver.plan() shouldBe None
    val fresh = put(fake, keys, "new")
    driver.drain().map(_.data) should contain theSameElementsAs fresh
  }

  test("given a batch read once, when it is evaluated again after more records arrived, then it yields the same rows") {
    val fake = newFake(2)
    put(fake, keys)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    val end = driver.plan().get
    val first = driver.read(end)
    put(fake, keys, "more")
    driver.read(end) shouldBe first
  }

  test("given two attempts of a batch that start together, when one ends later, then that one fails") {
    val fake = newFake(1)
    put(fake, keys.take(5))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    val end = driver.plan().get
    val factory = driver.stream.createReaderFactory()
    val partition = driver.stream.planInputPartitions(driver.committed, end).head
    val (a, b) = (factory.createReader(partition), factory.createReader(partition))
    while (a.next()) {}
    put(fake, keys.drop(5).take(5))
    val failure = intercept[IllegalStateException] { while (b.next()) {} }
    failure.getMessage should include("Another attempt of task 0 of batch 0 recorded")
  }

  test("given a driver restart after a batch was read but not committed, then the replay reads the same records") {
    val fake = newFake(2)
    put(fake, keys)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    val end = driver.plan().get
    val before = driver.read(end)
    put(fake, keys, "after")
    driver.restart()
    driver.read(end) shouldBe before
    driver.stream.commit(end)
    driver.committed = end
    driver.drain().map(_.data) should contain theSameElementsAs keys.map(k => s"after-$k")
  }

  test("given committed batches, when the driver restarts, then it goes on without repeating records") {
    val fake = newFake(3)
    val first = put(fake, keys)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    driver.drain().map(_.data) should contain theSameElementsAs first
    driver.restart()
    driver.plan() shouldBe None
    val second = put(fake, keys, "second")
    driver.drain().map(_.data) should contain theSameElementsAs second
  }

  test("given a batch that was only partly consumed, then the next batch reads its records again, losing none") {
    val fake = newFake(1)
    val all = put(fake, keys.take(10))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    val end = driver.plan().get
    val reader = driver.stream.createReaderFactory().createReader(
      driver.stream.planInputPartitions(driver.committed, end).head)
    reader.next() shouldBe true
    reader.close()
    driver.stream.commit(end)
    driver.committed = end
    driver.drain().map(_.data) should contain theSameElementsAs all
  }

  test("given a split while running, then parent records all come in batches before any child record") {
    val fake = newFake(1)
    val before = put(fake, keys, "before")
    val driver = new MicroBatchDriver(
      fake,
      Map(
        "kinesis.startingPosition" -> "TRIM_HORIZON",
        "kinesis.maxFetchRecordsPerShard" -> "7",
        "kinesis.getRecords.numberOfRecordsPerFetch" -> "7"))
    driver.runBatch().get should have size 7
    val (left, right) = fake.splitShard("s", "shardId-000000000000", BigInt(2).pow(127))
    val after = put(fake, keys, "after")
    val rows = driver.drain()
    (driver.batches.head ++ rows).map(_.data) should contain theSameElementsAs (before ++ after)
    val firstChildBatch = driver.batches.indexWhere(_.exists(r => r.shardId == left || r.shardId == right))
    val lastParentBatch = driver.batches.lastIndexWhere(_.exists(_.shardId == "shardId-000000000000"))
    firstChildBatch should be > lastParentBatch
  }

  test("given a merge while stopped, then the child is read after both parents, every record once") {
    val fake = newFake(2)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    val first = put(fake, keys, "one")
    driver.drain().map(_.data) should contain theSameElementsAs first
    val pending = put(fake, keys, "two")
    driver.restart()
    val child = fake.mergeShards("s", "shardId-000000000000", "shardId-000000000001")
    val merged = put(fake, keys, "three")
    val rows = driver.drain()
    rows.map(_.data) should contain theSameElementsAs (pending ++ merged)
    rows.filter(_.shardId == child).map(_.data) should contain theSameElementsAs merged
    rows.indexWhere(_.shardId == child) should be > rows.lastIndexWhere(_.shardId != child)
  }

  test("given a merge's child naming its parents out of id order, when nothing is new, then no batch runs again") {
    // Given a child whose listing names its parents in the order (1, 0), and every record read
    val fake = newFake(2)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    val child = fake.mergeShards("s", "shardId-000000000001", "shardId-000000000000")
    val all = put(fake, keys)
    val rows = driver.drain()
    // When the source is asked again with nothing new (from the last offset parsed from its JSON, as Spark asks)
    // Then its answer equals the offset Spark holds, so Spark starts no batch that would read the last one again
    driver.plan() shouldBe None
    rows.map(_.data) should contain theSameElementsAs all
    rows.map(_.shardId).distinct shouldBe Seq(child)
    val held = driver.committed.streams("s")(child).waitsFor
    held shouldBe Seq("shardId-000000000001", "shardId-000000000000")
    driver.committed shouldBe driver.stream.deserializeOffset(driver.committed.json())
  }

  test("given an end offset that is not after the start, then the batch has no task") {
    val fake = newFake(2)
    put(fake, keys)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    driver.runBatch().get should have size keys.size
    // Spark hands over two offsets of the same batch (as when it took two equal offsets for different ones)
    driver.stream.planInputPartitions(driver.committed, driver.committed) shouldBe empty
  }

  test("given an unread shard that expired, then the query fails naming it, or goes on with failOnDataLoss=false") {
    def scenario(failOnDataLoss: Boolean): MicroBatchDriver = {
      val fake = newFake(2)
      val driver = new MicroBatchDriver(
        fake,
        Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.failOnDataLoss" -> failOnDataLoss.toString))
      put(fake, keys)
      fake.splitShard("s", "shardId-000000000000", BigInt(2).pow(126))
      fake.deleteShard("s", "shardId-000000000000")
      driver
    }
    val message = intercept[IllegalStateException](scenario(failOnDataLoss = true).drain()).getMessage
    message should include("shardId-000000000000")
    message should include("kinesis.failOnDataLoss=false")
    scenario(failOnDataLoss = false).drain().map(_.shardId).toSet should not contain "shardId-000000000000"
  }

  test("given a stream that does not exist, then starting fails with a message naming it") {
    val fake = new FakeKinesisClient()
    intercept[ResourceMissingException](new MicroBatchDriver(fake, Map.empty)).getMessage should include("'s'")
  }

  test("given a record limit per shard, then a backlog is read over several batches, each record once") {
    val fake = newFake(1)
    val all = put(fake, keys)
    val driver = new MicroBatchDriver(
      fake,
      Map(
        "kinesis.startingPosition" -> "TRIM_HORIZON",
        "kinesis.maxFetchRecordsPerShard" -> "10",
        "kinesis.getRecords.numberOfRecordsPerFetch" -> "4"))
    driver.drain().map(_.data) shouldBe all
    driver.batches.size should be >= 4
  }

  test("given a metadata path reused by another query, then reading fails with a message saying so") {
    val fake = newFake(1)
    put(fake, keys.take(3))
    val shared = java.nio.file.Files.createTempDirectory("shared-metadata").toString
    val one =
      new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.metadataPath" -> shared))
    one.runBatch()
    val two = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "LATEST", "kinesis.metadataPath" -> shared))
    put(fake, keys.take(3), "x")
    intercept[IllegalStateException](two.runBatch()).getMessage should
      (include("another query") and include(shared) and include("kinesis.metadataPath"))
  }

  test("given AT_TIMESTAMP in the future, then nothing is read until records arrive at or after that instant") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 2)
    put(fake, keys.take(3), "early")
    val at = java.time.Instant.ofEpochMilli(clock() + 60000L).toString
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> s"AT_TIMESTAMP $at"), clock = clock)
    driver.plan() shouldBe None
    clock.advance(30000L)
    put(fake, keys.take(3), "too-early")
    driver.plan() shouldBe None
    clock.advance(30000L)
    val onTime = put(fake, keys.take(3), "on-time")
    driver.drain().map(_.data) should contain theSameElementsAs onTime
  }
}
