package io.github.sparkkinesis.source.realtime

import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.concurrent.Eventually.eventually
import org.scalatest.concurrent.PatienceConfiguration.Timeout
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import org.scalatest.time.{Seconds, Span}

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon
import io.github.sparkkinesis.source.reading.{
  FanOutReaderSettings,
  FetchBudget,
  ReaderSettings,
  SubscriptionCache,
  TaskShard
}

/**
 * What a real-time task holds in memory when many backlogged shards share it and its consumer is slow: the record data
 * its feeds fetched and have not handed over (in pages waiting for the queue, and queued), against the fake client
 * serving Kinesis' full 10-MiB pages.
 */
class RealTimeMemorySuite extends AnyFunSuite with Matchers {

  private val wall: () => Long = () => System.currentTimeMillis()
  private val Shards = 40
  private val RecordsPerShard = 100
  private val RecordBytes = 100 << 10 // 100 records: a full 10-MiB page, the shard's whole backlog

  /** Pages and events held at once by the task's feeds and queue, at most. */
  private val TaskBound = RealTimeRows.QueueBytes + FetchBudget.TaskBytes

  /** One fan-out event of 10 records per shard may wait in its reader beyond its page: it arrived whole. */
  private val EventBytes = 10L * RecordBytes

  private def settings(fanOut: Map[String, FanOutReaderSettings]): ReaderSettings =
    RealTimeRowsSuite.settings(fanOut = fanOut)
      .copy(maxBytesPerSecondPerShard = Some(256L << 20)) // the shards' 2-MiB/s pacing would only make the test slow

  /**
   * A stream of [[Shards]] backlogged shards, each [[RecordsPerShard]] records of [[RecordBytes]] (one array, so the
   * test's own memory stays small), read by one real-time task through `fanOut` or polling; `body` gets the fake, the
   * task and every record's (shard, sequence number).
   */
  private def withBacklog(fanOut: Boolean)(body: (FakeKinesisClient, RealTimeRows, Seq[(String, String)]) => Unit)
      : Unit = {
    val fake = new FakeKinesisClient(wall)
    val shards = fake.createStream("s", Shards)
    val data = new Array[Byte](RecordBytes)
    val expected = for (id <- shards; _ <- 1 to RecordsPerShard) yield id -> fake.putRecordToShard("s", id, data)
    fake.fanOut.recordsPerEvent = 10 // events of about 1 MiB, as AWS pushes them
    val consumer =
      if (fanOut) Map("s" -> FanOutReaderSettings(fake.registerConsumer(fake.streamArn("s"), "q").arn, 30000L, 5))
      else Map.empty[String, FanOutReaderSettings]
    val partition = RealTimePartition(
      1L,
      0,
      shards.map(id => TaskShard("s", id, 1L, TrimHorizon, None)),
      RealTimeLineage(shards.map(id => ShardRef("s", id) -> 0).toMap, Set.empty))
    val store = new HadoopShardEndStore(Files.createTempDirectory("rt-memory").toString, new Configuration())
    val r = new RealTimeRows(partition, settings(consumer), store, fake, wall, warm = new WarmShards())
    try body(fake, r, expected)
    finally {
      r.close()
      SubscriptionCache.shared.evict(0L)
    }
  }

  /**
   * Waits until every shard has been read from while nothing is taken (a stalled consumer), then takes every row, one
   * at a time; after each, the data fetched and not yet handed over must be within `bound`. Returns the rows' (shard,
   * sequence number).
   */
  private def drainWithin(fake: FakeKinesisClient, r: RealTimeRows, bound: Long): Seq[(String, String)] = {
    eventually(Timeout(Span(20, Seconds))) { fake.bytesServed.size shouldBe Shards }
    val handed = mutable.Buffer.empty[(String, String)]
    var handedBytes = 0L
    def held = fake.bytesServed.values.sum - handedBytes
    held should be <= bound
    val deadline = wall() + 30000L
    while (handed.size < Shards * RecordsPerShard && wall() < deadline) {
      if (r.next(100L)) {
        handed += (r.get().getUTF8String(5).toString -> r.get().getUTF8String(3).toString)
        handedBytes += r.get().getBinary(0).length
        held should be <= bound
      }
    }
    handed.toVector
  }

  test("given 40 backlogged shards of 10-MiB pages in one polling task and a consumer that stalls, when the task " +
    "reads, then the data fetched and not handed over stays within the task's queue and fetch budgets, and every " +
    "record comes once") {
    withBacklog(fanOut = false) { (fake, r, expected) =>
      val handed = drainWithin(fake, r, TaskBound)
      handed.sorted shouldBe expected.sorted
    }
  }

  test("given 40 backlogged shards read through enhanced fan-out in one task and a consumer that stalls, when the " +
    "task reads, then the data received and not handed over stays within the budgets and one event per shard, and " +
    "every record comes once") {
    withBacklog(fanOut = true) { (fake, r, expected) =>
      val handed = drainWithin(fake, r, TaskBound + Shards * EventBytes)
      handed.sorted shouldBe expected.sorted
    }
  }
}
