package io.github.sparkkinesis.source.reading

import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.concurrent.Eventually.eventually
import org.scalatest.concurrent.PatienceConfiguration.Timeout
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import org.scalatest.time.{Seconds, Span}

import io.github.sparkkinesis.client.{ClientSettings, FakeKinesisClient, ManualClock, RetrySettings}
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon
import io.github.sparkkinesis.source.realtime.WarmShards

/**
 * What a micro-batch task holds in memory when it reads many backlogged shards at once and its consumer is slow: the
 * record data its shard readers fetched and have not handed over, against the fake client serving Kinesis' full 10-MiB
 * pages.
 */
class MicroBatchMemorySuite extends AnyFunSuite with Matchers {

  private val wall: () => Long = () => System.currentTimeMillis()
  private val Shards = 40
  private val RecordsPerShard = 100
  private val RecordBytes = 100 << 10 // 100 records: a full 10-MiB page, the shard's whole backlog
  private val MiB = 1L << 20

  /**
   * Most data fetched and not handed over: the parallel readers' queue (a chunk of at most 1 MiB per shard, and two)
   * and the chunk each reader's thread fills, plus the pages of the task's fetch budget and one record beyond a share.
   */
  private val TaskBound = (Shards + 2 + Shards) * MiB + FetchBudget.TaskBytes + Shards.toLong * RecordBytes

  /** Pages every 20 ms (the shards' 2-MiB/s pacing would only make the tests slow), with `fanOut` per stream. */
  private def settings(fanOut: Map[String, FanOutReaderSettings] = Map.empty) = ReaderSettings(
    ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
    recordsPerFetch = 10000,
    fetchIntervalMs = 20L,
    maxRecordsPerShard = Long.MaxValue,
    maxTimePerShardMs = 60000L,
    retryBaseMs = 5L,
    retryMaxMs = 20L,
    dropMisroutedRecords = false,
    maxBytesPerSecondPerShard = Some(256L << 20),
    fanOut = fanOut)

  private def newStore() = new HadoopShardEndStore(Files.createTempDirectory("mb-memory").toString, new Configuration())

  /** An attempt of batch 1's task 0, reading `shards`: the first, unless `store` holds where that one ended them. */
  private def taskReading(
      fake: FakeKinesisClient,
      shards: Seq[TaskShard],
      store: HadoopShardEndStore = newStore(),
      readerSettings: ReaderSettings = settings()): TaskReader =
    new TaskReader(TaskPartition(1L, 0, shards), readerSettings, store, fake)

  /** Stream "s" of [[Shards]] shards, each with `records` records of [[RecordBytes]]: its shards, and every record. */
  private def backlog(fake: FakeKinesisClient, records: Int): (Seq[String], Seq[(String, String)]) = {
    val shards = fake.createStream("s", Shards)
    val data = new Array[Byte](RecordBytes)
    (shards, for (id <- shards; _ <- 1 to records) yield id -> fake.putRecordToShard("s", id, data))
  }

  /** Every row of `reader` as (shard, sequence number), each once per row; closes it. */
  private def readAll(reader: TaskReader): Seq[(String, String)] = {
    val rows = mutable.Buffer.empty[(String, String)]
    try while (reader.next()) rows += (reader.get().getUTF8String(5).toString -> reader.get().getUTF8String(3).toString)
    finally reader.close()
    rows.toVector
  }

  test("given 40 backlogged shards of 10-MiB pages in one micro-batch task and a consumer that stalls, when the " +
    "task reads, then the data fetched and not handed over stays within its readers' queue and its fetch budget, " +
    "and every record comes once") {
    // Given
    val fake = new FakeKinesisClient(wall)
    val (shards, expected) = backlog(fake, RecordsPerShard)
    val reader = taskReading(fake, shards.map(id => TaskShard("s", id, 1L, TrimHorizon, None)))
    try {
      // When: nothing is taken until every shard has been read from, then every row, one at a time
      eventually(Timeout(Span(20, Seconds))) { fake.bytesServed.size shouldBe Shards }
      val handed = mutable.Buffer.empty[(String, String)]
      var handedBytes = 0L
      def held = fake.bytesServed.values.sum - handedBytes
      held should be <= TaskBound
      while (reader.next()) {
        handed += (reader.get().getUTF8String(5).toString -> reader.get().getUTF8String(3).toString)
        handedBytes += reader.get().getBinary(0).length

        // Then
        held should be <= TaskBound
      }
      handed.sorted shouldBe expected.sorted
    } finally reader.close()
  }

  test("given 40 shards of 100 1-KiB records and the driver's word that their records are of 1 KiB, when a task " +
    "reads them, then each shard's first page holds its whole backlog rather than one record per MiB of its share") {
    // Given
    val fake = new FakeKinesisClient(wall)
    val shards = fake.createStream("s", Shards)
    for (id <- shards; _ <- 1 to RecordsPerShard) fake.putRecordToShard("s", id, new Array[Byte](1024))
    val hinted = shards.map(id => TaskShard("s", id, 1L, TrimHorizon, None, recordBytes = Some(1024)))
    // When
    val rows = readAll(taskReading(fake, hinted))
    // Then: one GetRecords call per shard, whose page reached the tip
    rows should have size Shards * RecordsPerShard
    fake.getRecordsCalls shouldBe Shards
  }

  test("given 40 backlogged shards of 100-KiB records read by one task, when the batch is read again after its first " +
    "attempt recorded its ends, then the replay, within the same budget and knowing no record size, reads exactly " +
    "the same records") {
    // Given
    val fake = new FakeKinesisClient(wall)
    val (shards, expected) = backlog(fake, 30)
    val data = new Array[Byte](RecordBytes)
    val store = newStore()
    val plan = shards.map(id => TaskShard("s", id, 1L, TrimHorizon, None))
    readAll(taskReading(fake, plan, store)).sorted shouldBe expected.sorted
    for (id <- shards) fake.putRecordToShard("s", id, data) // arrived after the batch: not the replay's
    // When
    val replayed = readAll(taskReading(fake, plan, store))
    // Then
    replayed.sorted shouldBe expected.sorted
  }

  test("given 40 shards of 30 100-KiB records pushed through enhanced fan-out, when one task's first attempt reads " +
    "them, then it reads every record that had arrived before it began: a subscription's pages are not cut to a " +
    "share, by which the last event's lag would misjudge the tip") {
    // Given
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val shards = fake.createStream("s", Shards)
    val consumer = fake.registerConsumer(fake.streamArn("s"), "q").arn
    val data = new Array[Byte](RecordBytes)
    val expected = for (id <- shards; _ <- 1 to 30) yield {
      clock.advance(1L) // records of a shard arrive a millisecond apart
      id -> fake.putRecordToShard("s", id, data)
    }
    clock.advance(1000L)
    val fanOut = settings(Map("s" -> FanOutReaderSettings(consumer, 30000L, 5)))
    // When
    val read =
      try
        readAll(taskReading(fake, shards.map(id => TaskShard("s", id, 1L, TrimHorizon, None)), readerSettings = fanOut))
      finally SubscriptionCache.shared.evict(0L)
    // Then
    read.sorted shouldBe expected.sorted
  }

  test("given a task of 12 backlogged shards, whose equal shares carry a shard's 2 MiB/s at a call every 500 ms, and " +
    "the budget's lending half all lent, when a shard's call is due, then it calls at once for its equal share " +
    "instead of waiting for a loan") {
    // Given
    val fake = new FakeKinesisClient(wall)
    val (shards, _) = backlog(fake, 30)
    val budget = FetchBudget.ofMicroBatchTask(() => 12)
    val lent = Seq.fill(6)(budget.reserve(0L))
    budget.reserve(0L).loan.bytes shouldBe 0L
    // a loan comes back 50 ms later, within the 200 ms a reader that waits for one would wait
    val returner = new Thread(() => { Thread.sleep(50L); budget.giveBack(lent.head) })
    val atTheirPace = settings().copy(fetchIntervalMs = 500L, maxBytesPerSecondPerShard = None)
    val shard = TaskShard("s", shards.head, 1L, TrimHorizon, None, recordBytes = Some(RecordBytes.toLong))
    val reader = new ShardReader(shard, None, atTheirPace, fake, warm = new WarmShards(), budget = budget)
    try {
      // When
      returner.start()
      reader.next() shouldBe true
      // Then: 13 records of 100 KiB fill the equal share of 1.33 MiB; a reader given the loan would have read all 30
      fake.bytesServed(shards.head) shouldBe (budget.equalShare.bytes / RecordBytes) * RecordBytes
    } finally {
      returner.join()
      reader.close()
    }
  }
}
