package io.github.sparkkinesis.source.realtime

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.Semaphore

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.aggregation.KplTestAggregates
import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.metrics.ReadMetrics
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon
import io.github.sparkkinesis.source.reading.{
  FanOutReaderSettings,
  FetchBudget,
  ReaderSettings,
  RecordSize,
  ShardPages,
  TaskShard
}

/**
 * Shard readers kept warm across real-time batches ([[WarmShards]]): the next batch's task of a shard takes over the
 * reader the last one parked, with what it had read ahead, and hands over exactly the records a fresh reader would.
 */
class WarmShardsSuite extends AnyFunSuite with Matchers {

  private val wall: () => Long = () => System.currentTimeMillis()
  private val store = new HadoopShardEndStore(Files.createTempDirectory("warm-ends").toString, new Configuration())

  private def settings(pollMs: Long, fanOut: Map[String, FanOutReaderSettings] = Map.empty) = ReaderSettings(
    ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
    recordsPerFetch = 10000,
    fetchIntervalMs = pollMs,
    maxRecordsPerShard = Long.MaxValue,
    maxTimePerShardMs = 60000L,
    retryBaseMs = 5L,
    retryMaxMs = 20L,
    dropMisroutedRecords = false,
    fanOut = fanOut,
    fanOutEndCheckMs = Some(60000L))

  /** The task of batch `batch` reading each shard of stream "s" from its start in `starts`. */
  private def task(
      fake: FakeKinesisClient,
      warm: WarmShards,
      s: ReaderSettings,
      batch: Long,
      starts: Map[String, ShardPosition]): RealTimeRows = {
    val shards = starts.toSeq.sortBy(_._1).map { case (id, start) => TaskShard("s", id, batch, start, None) }
    val lineage = RealTimeLineage(shards.map(t => ShardRef("s", t.shardId) -> 0).toMap, Set.empty)
    new RealTimeRows(RealTimePartition(batch, 0, shards, lineage), s, store, fake, wall, warm = warm)
  }

  /** Up to `n` rows, each (shard, value), waiting at most `withinMs` in all. */
  private def hand(r: RealTimeRows, n: Int, withinMs: Long): Seq[(String, String)] = {
    val out = mutable.Buffer.empty[(String, String)]
    val deadline = wall() + withinMs
    while (out.size < n && wall() < deadline && r.next(math.max(0L, deadline - wall()))) {
      out += (r.get().getUTF8String(5).toString -> new String(r.get().getBinary(0), UTF_8))
    }
    out.toVector
  }

  /**
   * Runs batches of `rowsPerBatch(i)` rows each, every one starting where the last one's offset stood, until `total`
   * rows came: the rows per shard, in the order handed over.
   */
  private def batches(
      fake: FakeKinesisClient,
      warm: WarmShards,
      s: ReaderSettings,
      shardIds: Seq[String],
      total: Int,
      rowsPerBatch: Int => Int): Map[String, Seq[String]] = {
    var starts: Map[String, ShardPosition] = shardIds.map(_ -> (TrimHorizon: ShardPosition)).toMap
    val seen = mutable.Buffer.empty[(String, String)]
    var batch = 1L
    val deadline = wall() + 30000L
    while (seen.size < total && wall() < deadline) {
      val r = task(fake, warm, s, batch, starts)
      try {
        seen ++= hand(r, rowsPerBatch(batch.toInt), withinMs = 2000L)
        starts = r.offset.ends.map(e => e.shardId -> e.end).toMap
      } finally r.close()
      batch += 1
    }
    seen.groupBy(_._1).map { case (id, rows) => id -> rows.map(_._2).toVector }
  }

  private def put(fake: FakeKinesisClient, shard: String, values: Seq[String]): Unit =
    values.foreach(v => fake.putRecordToShard("s", shard, v.getBytes(UTF_8)))

  test("given rows read ahead at every boundary, when each next batch starts where the last stopped, then it takes " +
    "the polling readers over and hands every record over once, in order, with no new iterator") {
    val fake = new FakeKinesisClient(wall)
    val ids = fake.createStream("s", 2)
    val clock = new ManualClock()
    val warm = new WarmShards(60000L, clock)
    val expected = ids.map(id => id -> (1 to 150).map(i => s"$id-$i")).toMap
    expected.foreach { case (id, values) => put(fake, id, values.take(100)) } // read ahead from the first page on
    val producer = new Thread(() =>
      (100 until 150).foreach { i =>
        expected.foreach { case (id, values) => put(fake, id, Seq(values(i))) }
        Thread.sleep(5L)
      })
    producer.start()
    try {
      batches(fake, warm, settings(pollMs = 5L), ids, 300, i => 1 + i % 7) shouldBe expected
      fake.shardIteratorCalls shouldBe ids.size
      warm.size shouldBe ids.size
    } finally {
      producer.join()
      clock.advance(60000L)
      warm.evict()
    }
  }

  test("given enhanced fan-out, when each next batch starts where the last stopped, then it takes the " +
    "subscriptions over and hands every record over once, in order, with one subscribe per shard") {
    val fake = new FakeKinesisClient(wall)
    val ids = fake.createStream("s", 2)
    fake.fanOut.recordsPerEvent = 7
    val consumer = fake.registerConsumer(fake.streamArn("s"), "q").arn
    val s = settings(pollMs = 5L, fanOut = Map("s" -> FanOutReaderSettings(consumer, 30000L, 5)))
    val clock = new ManualClock()
    val warm = new WarmShards(60000L, clock)
    val expected = ids.map(id => id -> (1 to 60).map(i => s"$id-$i")).toMap
    expected.foreach { case (id, values) => put(fake, id, values) }
    try {
      batches(fake, warm, s, ids, 120, i => 1 + i % 5) shouldBe expected
      fake.callsOf("SubscribeToShard") shouldBe ids.size
      fake.fanOut.openSubscriptions shouldBe ids.size
    } finally {
      clock.advance(60000L)
      warm.evict()
    }
    fake.fanOut.openSubscriptions shouldBe 0 // an unclaimed parked subscription is cancelled
  }

  test("given a parked reader, when the next task starts elsewhere, then it reads afresh from its own start and the " +
    "parked reader is closed") {
    val fake = new FakeKinesisClient(wall)
    val id = fake.createStream("s", 1).head
    put(fake, id, Seq("a", "b", "c"))
    val warm = new WarmShards()
    val s = settings(pollMs = 5L)
    val first = task(fake, warm, s, 1L, Map(id -> TrimHorizon))
    try hand(first, 2, withinMs = 5000L).map(_._2) shouldBe Seq("a", "b")
    finally first.close()
    warm.size shouldBe 1
    val replay = task(fake, warm, s, 1L, Map(id -> TrimHorizon)) // the same batch again, as after a failure
    try hand(replay, 3, withinMs = 5000L).map(_._2) shouldBe Seq("a", "b", "c")
    finally replay.close()
    fake.shardIteratorCalls shouldBe 2
  }

  test("given a batch ending inside a KPL aggregate, when the task closes, then it parks nothing for that shard") {
    val fake = new FakeKinesisClient(wall)
    val id = fake.createStream("s", 1).head
    fake.putRecordToShard("s", id, KplTestAggregates.aggregate((1 to 3).map(i => ("pk", None, s"u$i".getBytes(UTF_8)))))
    val warm = new WarmShards()
    val r = task(fake, warm, settings(pollMs = 5L), 1L, Map(id -> TrimHorizon))
    try hand(r, 2, withinMs = 5000L).map(_._2) shouldBe Seq("u1", "u2")
    finally r.close()
    warm.size shouldBe 0
  }

  test("given a reader parked longer than the idle limit, when a task starts where it stopped, then it is closed, " +
    "not taken over") {
    val clock = new ManualClock()
    val warm = new WarmShards(30000L, clock)
    val pages = new RecordingPages
    val key = WarmKey(settings(pollMs = 5L), new FakeKinesisClient(clock), "s", "shard-1")
    warm.park(key, ParkedReader(pages, Vector.empty, TrimHorizon, 0L, RecordSize.Unknown))
    clock.advance(30000L)
    warm.take(key, TrimHorizon) shouldBe None
    pages.closedAs shouldBe Some(false)
  }

  test("given a shard behind 10,000 empty pages and batches of 25 calls each, when every batch starts where the " +
    "offset stands, then the walk goes on across batches and reaches the first record after about 10,000 calls") {
    val fake = new FakeKinesisClient(wall)
    val id = fake.createStream("s", 1).head
    put(fake, id, Seq("first"))
    fake.emptyPagesAhead("s", id, 10000, millisBehindLatest = Some(86400000L))
    // Each batch lets the reader (walking on a thread of its own, parked or not) make 25 calls: 5 s at 5 calls/s
    val permits = new Semaphore(0)
    fake.gateGetRecords(Some(permits))
    val warm = new WarmShards()
    val s = settings(pollMs = 0L)
    var got = Seq.empty[(String, String)]
    var callsWhenReached = 0
    var batch = 0L
    try {
      while (got.isEmpty && batch < 1000) {
        batch += 1
        val r = task(fake, warm, s, batch, Map(id -> TrimHorizon)) // nothing was handed over: the offset stays
        try {
          val end = fake.getRecordsCalls + 25
          permits.release(25)
          while (got.isEmpty && fake.getRecordsCalls < end) got = hand(r, 1, withinMs = 1L)
          callsWhenReached = fake.getRecordsCalls
        } finally r.close()
      }
    } finally {
      fake.gateGetRecords(None)
      permits.release(1000) // the reader's call waiting at the gate
    }
    got.map(_._2) shouldBe Seq("first")
    batch should be > 350L // about 10,000 / 25 boundaries crossed on the way
    fake.shardIteratorCalls shouldBe 1 // one walk, never started again
    callsWhenReached should be < 10100 // the 10,001 pages, and what the feed polled at the tip before the row came
  }

  test("given a feed stopped by its task while the queue was full, when asked what it kept, then it holds every " +
    "record of the page from the one it could not emit on, in order") {
    val records = (1 to 5).map(i => KinesisRecord(s"r$i".getBytes(UTF_8), "pk", s"$i", 0L))
    val pages = new RecordingPages(Seq(RecordBatch(records, Some("next"), 0L)))
    var emitted = 0
    val feed = new ShardFeed(
      TaskShard("s", "shard-1", 1L, TrimHorizon, None),
      pages,
      10000,
      dropMisrouted = false,
      emit = _ => {
        if (emitted == 2) throw new InterruptedException("the task ended while the queue was full")
        emitted += 1
      },
      new FetchBudget(Long.MaxValue, Long.MaxValue, () => 1))
    feed.run()
    val (kept, unsent, _, _) = feed.unsent.get
    kept shouldBe pages
    unsent.map(_.after) shouldBe (3 to 5).map(i => ShardPosition.AfterSequenceNumber(s"$i"))
  }

  test("given a feed that learnt its shard's 100-KiB records, when it is parked and a feed takes it over, then the " +
    "new feed sizes its first page by them, not by 1-MiB records") {
    def page(from: Int, n: Int) = RecordBatch(
      (from until from + n).map(i => KinesisRecord(new Array[Byte](100 << 10), "pk", s"$i", 0L)),
      Some("next"),
      1L)
    val share = new FetchBudget(2L << 20, Long.MaxValue, () => 1) // an equal share of 1 MiB
    def stopAfter(n: Int): FeedItem => Unit = {
      var emitted = 0
      _ => {
        if (emitted == n) throw new InterruptedException("the task ended")
        emitted += 1
      }
    }
    val first = new RecordingPages(Seq(page(1, 1), page(2, 1)))
    val feed = new ShardFeed(
      TaskShard("s", "shard-1", 1L, TrimHorizon, None),
      first,
      10000,
      dropMisrouted = false,
      stopAfter(1),
      share)
    feed.run()
    val (_, _, _, size) = feed.unsent.get
    val next = new RecordingPages(Seq(page(2, 1)))
    new ShardFeed(
      TaskShard("s", "shard-1", 2L, TrimHorizon, None),
      next,
      10000,
      dropMisrouted = false,
      stopAfter(0),
      share,
      size = size).run()

    first.limits shouldBe Seq(1, 10) // a 1-MiB share: one record of 1 MiB, then ten of 100 KiB
    size shouldBe RecordSize(100L << 10, 1.0)
    next.limits shouldBe Seq(10)
  }

  test("given a polling feed whose task's budget has its lending half free, when it fetches, then its pages borrow " +
    "beyond its equal share, while a subscription's stay within it") {
    def page(from: Int) = RecordBatch(
      (from until from + 20).map(i => KinesisRecord(new Array[Byte](100 << 10), "pk", s"$i", 0L)),
      Some("next"),
      1L)
    def read(pages: RecordingPages): Seq[Int] = {
      var emitted = 0
      new ShardFeed(
        TaskShard("s", "shard-1", 1L, TrimHorizon, None),
        pages,
        10000,
        dropMisrouted = false,
        _ => {
          if (emitted == 20) throw new InterruptedException("the task ended")
          emitted += 1
        },
        new FetchBudget(2L << 20, Long.MaxValue, () => 1)).run() // equal share 1 MiB, 1 MiB to lend
      pages.limits.toSeq
    }

    read(new RecordingPages(Seq(page(1), page(21)), onDemand = true)) shouldBe Seq(2, 20)
    read(new RecordingPages(Seq(page(1), page(21)))) shouldBe Seq(1, 10)
  }

  test("given executors, when real-time batches are planned twice, then each task prefers the same executor, where " +
    "its shards' readers were parked") {
    val tracked = Map("s" -> (1 to 6).map(i => s"shard-$i" -> ShardState(TrimHorizon, Nil)).toMap)
    def plan() = RealTimePlan(
      1L,
      tracked,
      RealTimeTasks(1, None, BatchSlots.stateless(4)),
      (_, _) => Map.empty,
      _ => Set.empty,
      IndexedSeq("e1", "e2", "e3"))
      .partitions.map(p => p.shards.map(_.shardId) -> p.preferredLocations().toSeq)
    plan().map(_._2) shouldBe Seq(Seq("e1"), Seq("e2"), Seq("e3"), Seq("e1"))
    plan() shouldBe plan()
  }

  /** Pages that hand out `batches` one by one, then empty ones, and note how they were closed. */
  /** Pages that record each fetch's limit; `onDemand`: read on demand, as polling's are. */
  private final class RecordingPages(batches: Seq[RecordBatch] = Nil, onDemand: Boolean = false) extends ShardPages {
    override def awaitNextCall(deadlineMs: Long): Boolean = onDemand
    private var left = batches
    var closedAs: Option[Boolean] = None
    val limits = mutable.Buffer.empty[Int]
    override def fetch(deadlineMs: Long, limit: Int): Option[RecordBatch] = {
      limits += limit
      val page = left.headOption.getOrElse(RecordBatch(Nil, Some("next"), 0L))
      left = left.drop(1)
      Some(page)
    }
    override def position: ShardPosition = TrimHorizon
    override def isEnded: Boolean = false
    override def rewind(to: ShardPosition): Unit = ()
    override val metrics: ReadMetrics = ReadMetrics.detached
    override def getRecordsCalls: Long = 0L
    override def throttledCalls: Long = 0L
    override def close(handedOver: Boolean): Unit = closedAs = Some(handedOver)
  }
}
