package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}

/**
 * The GetRecords calls a query spends per shard with default options, counted on the fake client while simulated time
 * passes (Spark asks for the latest offset every 10 ms when nothing is new). Every default stays well inside Kinesis' 5
 * calls per second per shard, which all consumers of the stream share.
 */
class PollingBudgetSuite extends AnyFunSuite with Matchers {

  /** The connector's defaults, over the test driver's fast settings. */
  private val defaults = Map(
    "kinesis.getRecords.fetchIntervalMs" -> "500",
    "kinesis.idleShardCheckInterval" -> "1s",
    "kinesis.describeShardInterval" -> "1s")

  private val Seconds = 60
  private val TickMs = 10L

  private def fixture(shards: Int): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", shards)
    (fake, clock)
  }

  test("given an idle stream and default options, then the query spends at most one call per second per shard") {
    val (fake, clock) = fixture(shards = 4)
    val driver = new MicroBatchDriver(fake, defaults + ("kinesis.startingPosition" -> "LATEST"), clock = clock)
    val before = fake.getRecordsCalls
    for (_ <- 1 to (Seconds * 1000 / TickMs).toInt) {
      driver.plan() shouldBe None
      clock.advance(TickMs)
    }
    val perShardPerSecond = (fake.getRecordsCalls - before).toDouble / 4 / Seconds
    info(f"idle: $perShardPerSecond%.2f GetRecords calls per second per shard")
    perShardPerSecond should be <= 1.02
    perShardPerSecond should be >= 0.9 // it still looks, once a second, so a new record is found promptly
  }

  test("given shards receiving 100 records per second each, then the query spends at most two calls per second " +
    "per shard, reads every record once and, once streaming, within 0.6 s of simulated time") {
    val (fake, clock) = fixture(shards = 2)
    val driver = new MicroBatchDriver(fake, defaults + ("kinesis.startingPosition" -> "LATEST"), clock = clock)
    driver.plan() shouldBe None
    val putAt = mutable.Map.empty[String, Long]
    val lagsMs = mutable.Buffer.empty[Long]
    val startedAt = clock()
    val before = fake.getRecordsCalls
    var n = 0
    for (_ <- 1 to (Seconds * 1000 / TickMs).toInt) {
      Seq("shardId-000000000000", "shardId-000000000001").foreach { shard =>
        n += 1
        fake.putRecordToShard("s", shard, s"r$n".getBytes(UTF_8))
        putAt(s"r$n") = clock()
      }
      driver.runBatch().foreach(rows => rows.foreach(r => lagsMs += clock() - putAt(r.data)))
      if (clock() - startedAt < 2000L) lagsMs.clear() // the first records after a quiet spell wait for a check
      clock.advance(TickMs)
    }
    val perShardPerSecond = (fake.getRecordsCalls - before).toDouble / 2 / Seconds
    info(
      f"busy: $perShardPerSecond%.2f GetRecords calls per second per shard; steady max lag ${lagsMs.max} ms simulated")
    perShardPerSecond should be <= 2.05
    driver.batches.flatten.map(_.data).distinct.size shouldBe driver.batches.flatten.size
    driver.batches.flatten.size should be >= n - 2 * 60 // all but the last ticks' records have been read
    lagsMs.max should be <= 600L
  }

  test("given two busy shards read in different batches (one began receiving records later, and a batch takes " +
    "300 ms), then each is read again without a check and calls stay within two per second per shard") {
    val (fake, clock) = fixture(shards = 2)
    val driver = new MicroBatchDriver(fake, defaults + ("kinesis.startingPosition" -> "LATEST"), clock = clock)
    driver.plan() shouldBe None
    val shards = Seq("shardId-000000000000", "shardId-000000000001")
    val startedAt = clock()
    var n = 0
    def put(shard: String): Unit = { n += 1; fake.putRecordToShard("s", shard, s"r$n".getBytes(UTF_8)) }
    def tick(): Unit = {
      put(shards.head)
      if (clock() - startedAt >= 1300L) put(shards(1)) // out of step with the first shard from here on
      if (driver.runBatch().isDefined) clock.advance(300L) // the tasks' time: the batch ends 300 ms after it began
      clock.advance(TickMs)
    }
    while (clock() - startedAt < 5000L) tick()
    val before = fake.getRecordsCalls
    val batchesBefore = driver.batches.size
    val measuredFrom = clock()
    while (clock() - measuredFrom < Seconds * 1000L) tick()
    val perShardPerSecond = (fake.getRecordsCalls - before).toDouble / 2 / ((clock() - measuredFrom) / 1000.0)
    val shardsPerBatch = driver.batches.drop(batchesBefore).map(_.map(_.shardId).distinct.size)
    info(f"out of step: $perShardPerSecond%.2f GetRecords calls per second per shard, " +
      f"${shardsPerBatch.sum.toDouble / shardsPerBatch.size}%.2f shards per batch")
    perShardPerSecond should be <= 2.05
    driver.batches.flatten.map(_.data).distinct.size shouldBe driver.batches.flatten.size
  }

  test("given a sparse stream (a record every 3 s), then no batch is empty and calls stay near one per second") {
    val (fake, clock) = fixture(shards = 1)
    val driver = new MicroBatchDriver(fake, defaults + ("kinesis.startingPosition" -> "LATEST"), clock = clock)
    driver.plan() shouldBe None
    val before = fake.getRecordsCalls
    for (tick <- 1 to (Seconds * 1000 / TickMs).toInt) {
      if (tick % 300 == 0) fake.putRecordToShard("s", "shardId-000000000000", s"r$tick".getBytes(UTF_8))
      driver.runBatch()
      clock.advance(TickMs)
    }
    val perSecond = (fake.getRecordsCalls - before).toDouble / Seconds
    info(f"sparse: $perSecond%.2f GetRecords calls per second")
    driver.batches.foreach(_ should not be empty)
    driver.batches.flatten.size shouldBe 20 - 1 // the last record lands in the last tick and is still unread
    perSecond should be <= 1.4
  }
}
