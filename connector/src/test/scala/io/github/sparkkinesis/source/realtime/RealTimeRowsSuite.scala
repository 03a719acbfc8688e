package io.github.sparkkinesis.source.realtime

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.LoneElement
import org.scalatest.concurrent.Eventually.eventually
import org.scalatest.concurrent.PatienceConfiguration.Timeout
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import org.scalatest.time.{Seconds, Span}

import io.github.sparkkinesis.aggregation.KplTestAggregates
import io.github.sparkkinesis.client._
import io.github.sparkkinesis.compat.JavaCollections._
import io.github.sparkkinesis.metadata.{HadoopShardEndStore, ShardEndRecord, ShardEndStore, TaskEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, AfterSubSequenceNumber, ShardEnd, TrimHorizon}
import io.github.sparkkinesis.source.reading.{FanOutReaderSettings, ReaderSettings, SubscriptionCache, TaskShard}

/**
 * A real-time task's rows against the fake client, on the wall clock: what it hands over, when, and where it stands.
 */
class RealTimeRowsSuite extends AnyFunSuite with Matchers with LoneElement {

  private val shard0 = "shardId-000000000000"
  private val wall: () => Long = () => System.currentTimeMillis()

  import RealTimeRowsSuite.settings

  private def newStore(): ShardEndStore =
    new HadoopShardEndStore(Files.createTempDirectory("rt-ends").toString, new Configuration())

  private def rows(
      fake: FakeKinesisClient,
      shards: Seq[String],
      task: Int = 0,
      lineage: Option[RealTimeLineage] = None,
      s: ReaderSettings = settings(),
      store: ShardEndStore = newStore(),
      start: ShardPosition = TrimHorizon,
      warm: WarmShards = new WarmShards(),
      attempt: Int = 0): RealTimeRows = {
    val partition = RealTimePartition(
      1L,
      task,
      shards.map(id => TaskShard("s", id, 1L, start, None)),
      lineage.getOrElse(RealTimeLineage(shards.map(id => ShardRef("s", id) -> task).toMap, Set.empty)))
    new RealTimeRows(partition, s, store, fake, wall, warm = warm, attempt = attempt)
  }

  /** Rows until `n` have come or `withinMs` has passed: (value, shard) each. */
  private def take(r: RealTimeRows, n: Int, withinMs: Long = 10000L): Seq[(String, String)] = {
    val out = mutable.Buffer.empty[(String, String)]
    val deadline = wall() + withinMs
    while (out.size < n && wall() < deadline) {
      if (r.next(deadline - wall())) {
        out += (new String(r.get().getBinary(0), UTF_8) -> r.get().getUTF8String(5).toString)
      }
    }
    out.toVector
  }

  private def put(fake: FakeKinesisClient, shard: String, values: Seq[String]): Unit =
    values.foreach(v => fake.putRecordToShard("s", shard, v.getBytes(UTF_8)))

  /**
   * A task reading shard 0 of a new one-shard stream through a subscription of a new consumer, `first` put before it
   * starts, the fake's subscriptions set up by `shape`; closed after `body`.
   */
  private def withFanOut(first: Seq[String], silenceMs: Long = 30000L, shape: FakeFanOut => Unit = _ => ())(
      body: (FakeKinesisClient, RealTimeRows) => Unit): Unit = {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    shape(fake.fanOut)
    val consumer = fake.registerConsumer(fake.streamArn("s"), "q").arn
    put(fake, shard0, first)
    val r = rows(fake, Seq(shard0), s = settings(fanOut = Map("s" -> FanOutReaderSettings(consumer, silenceMs, 5))))
    try body(fake, r)
    finally {
      r.close()
      SubscriptionCache.shared.evict(0L)
    }
  }

  /** Splits shard 0 and puts one record into each child: their values. */
  private def splitAndPut(fake: FakeKinesisClient): Set[String] = {
    val (left, right) = fake.splitShard("s", shard0, BigInt(2).pow(127))
    put(fake, left, Seq("l1"))
    put(fake, right, Seq("r1"))
    Set("l1", "r1")
  }

  test("given records put while a task runs, when it reads, then it hands each over once, in order, as it arrives") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    val r = rows(fake, Seq(shard0))
    try {
      put(fake, shard0, Seq("a", "b"))
      take(r, 2).map(_._1) shouldBe Seq("a", "b")
      put(fake, shard0, Seq("c"))
      take(r, 1).map(_._1) shouldBe Seq("c")
      r.next(50L) shouldBe false
      val end = r.offset.ends.loneElement
      end.end shouldBe AfterSequenceNumber(fake.recordsOf("s").last.sequenceNumber)
      end.recordCount shouldBe 3
    } finally r.close()
  }

  test("given rows read ahead but not handed over, when the offset is asked, then it stands after the last handed") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    put(fake, shard0, (1 to 5).map(i => s"r$i"))
    val r = rows(fake, Seq(shard0))
    try {
      take(r, 2).map(_._1) shouldBe Seq("r1", "r2")
      r.offset.ends.loneElement.end shouldBe AfterSequenceNumber(fake.recordsOf("s")(1).sequenceNumber)
    } finally r.close()
  }

  private def aggregateOf(values: Seq[String]): Array[Byte] =
    KplTestAggregates.aggregate(values.map(v => ("pk", None, v.getBytes(UTF_8))))

  test("given a KPL aggregate, when its sub-records are handed over, then the position moves into it, after the last " +
    "sub-record handed over, and past it with its last") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    fake.putRecordToShard("s", shard0, aggregateOf(Seq("u1", "u2", "u3")))
    val r = rows(fake, Seq(shard0))
    try {
      val seq = fake.recordsOf("s").head.sequenceNumber
      take(r, 2).map(_._1) shouldBe Seq("u1", "u2")
      r.offset.ends.loneElement.end shouldBe AfterSubSequenceNumber(seq, 1L)
      take(r, 1).map(_._1) shouldBe Seq("u3")
      r.offset.ends.loneElement.end shouldBe AfterSequenceNumber(seq)
    } finally r.close()
  }

  test("given a task that ended inside a KPL aggregate, when the next task starts where it ended, then it hands over " +
    "only the aggregate's sub-records after those handed over, then the records after it") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    fake.putRecordToShard("s", shard0, aggregateOf(Seq("u1", "u2", "u3")))
    put(fake, shard0, Seq("p"))
    val first = rows(fake, Seq(shard0))
    val end =
      try {
        take(first, 1).map(_._1) shouldBe Seq("u1")
        first.offset.ends.loneElement.end
      } finally first.close()
    val next = rows(fake, Seq(shard0), start = end)
    try {
      take(next, 3).map(_._1) shouldBe Seq("u2", "u3", "p")
      next.next(200L) shouldBe false
    } finally next.close()
  }

  test("given nothing arrives, when next waits with a timeout, then it returns false within the timeout") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    val r = rows(fake, Seq(shard0))
    try {
      Seq(0L, 30L, 200L).foreach { timeout =>
        val started = System.nanoTime()
        r.next(timeout) shouldBe false
        (System.nanoTime() - started) / 1000000L should be < timeout + 150L
      }
    } finally r.close()
  }

  test("given a start time before now, when next waits from it, then it returns at that start plus the timeout") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    val r = rows(fake, Seq(shard0))
    try {
      val started = wall()
      r.next(started - 400L, 500L) shouldBe false
      (wall() - started) should be < 350L
      r.next(wall() - 1000L, 500L) shouldBe false // already past: it only takes what is there
    } finally r.close()
  }

  test("given 500,000 records of one byte and a task that takes no row, when its feed reads on, then the rows it " +
    "queues stay within the bound") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    (1 to 500000).foreach(i => fake.putRecordToShard("s", shard0, Array(i.toByte)))
    val r = rows(fake, Seq(shard0))
    try {
      // The feed waits for room in the queue; without a bound on rows it would queue all 500,000 and go on polling.
      eventually(Timeout(Span(60, Seconds))) {
        Thread.getAllStackTraces.keySet.asScala.exists(t =>
          t.getName == "kinesis-realtime batch 1 task 0" && t.getState == Thread.State.WAITING) shouldBe true
      }
      r.peakQueuedRows should be <= RealTimeRows.QueueRows
      take(r, 3).map(_._1.getBytes(UTF_8).toSeq) shouldBe Seq(Seq(1.toByte), Seq(2.toByte), Seq(3.toByte))
    } finally r.close()
  }

  test("given GetRecords calls that hang, when next waits, then it still returns at its timeout") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    val hang = new java.util.concurrent.CountDownLatch(1)
    fake.failNextCalls("GetRecords", 1000) { hang.await(); new KinesisClientException("released") }
    val r = rows(fake, Seq(shard0))
    try {
      val started = System.nanoTime()
      r.next(100L) shouldBe false
      (System.nanoTime() - started) / 1000000L should be < 400L
    } finally {
      hang.countDown()
      r.close()
    }
  }

  test("given throttling and empty pages with records ahead, when the task reads, then it backs off and never fails") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    put(fake, shard0, Seq("a", "b"))
    fake.emptyPagesAhead("s", shard0, 3)
    fake.throttleNextGetRecords(5)
    val r = rows(fake, Seq(shard0))
    try {
      take(r, 2).map(_._1) shouldBe Seq("a", "b")
      val stats = r.offset.ends.loneElement.stats.get
      stats.throttledCalls shouldBe 5
    } finally r.close()
  }

  test("given an idle shard, when the task polls it, then calls are paced by the real-time poll interval") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    val r = rows(fake, Seq(shard0), s = settings(pollMs = 200L))
    try {
      val started = wall()
      r.next(1000L) shouldBe false
      val calls = fake.getRecordsCalls
      val seconds = (wall() - started) / 1000.0
      calls.toDouble should be <= (seconds * 5.0 + 1.0)
      calls should be >= 3
    } finally r.close()
  }

  test("given a shard split while a task reads it, when the parent ends, then its children follow in the same task") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    put(fake, shard0, Seq("p1", "p2"))
    val r = rows(fake, Seq(shard0))
    try {
      take(r, 2).map(_._1) shouldBe Seq("p1", "p2")
      val (left, right) = fake.splitShard("s", shard0, BigInt(2).pow(127))
      put(fake, left, Seq("l1"))
      put(fake, right, Seq("r1"))
      take(r, 2).map(_._1).toSet shouldBe Set("l1", "r1")
      val offset = r.offset
      offset.ends.map(e => e.shardId -> e.end).toMap.apply(shard0) shouldBe ShardEnd
      offset.children shouldBe Map(ShardRef("s", left) -> Seq(shard0), ShardRef("s", right) -> Seq(shard0))
    } finally r.close()
  }

  /**
   * Shards a (holding a1) and b (holding b1, b2) of a stream, read in batch 1 by tasks 0 and 1 over one store; the
   * tasks start when first used.
   */
  /**
   * Shards a and b, read by tasks 0 (`first`) and 1 (`second`), as Spark's attempts `firstAttempt`, `secondAttempt`.
   */
  private final class TwoParents(firstAttempt: Int = 0, secondAttempt: Int = 0) {
    val fake = new FakeKinesisClient(wall)
    val Seq(a, b) = fake.createStream("s", 2)
    val store: ShardEndStore = newStore()
    val lineage: RealTimeLineage = RealTimeLineage(Map(ShardRef("s", a) -> 0, ShardRef("s", b) -> 1), Set.empty)
    put(fake, a, Seq("a1"))
    put(fake, b, Seq("b1", "b2"))
    lazy val first: RealTimeRows =
      rows(fake, Seq(a), task = 0, lineage = Some(lineage), store = store, attempt = firstAttempt)
    lazy val second: RealTimeRows =
      rows(fake, Seq(b), task = 1, lineage = Some(lineage), store = store, attempt = secondAttempt)

    /** What the first attempt of task 1 left when it failed: a record, in this planning, that it read b to its end. */
    def recordSecondsFailedAttempt(): Unit = store.recordIfAbsent(TaskEndRecord(
      1L,
      lineage.slot(ShardRef("s", b)).get,
      Seq(ShardEndRecord("s", b, 1L, TrimHorizon, ShardEnd, 0L)),
      Some(lineage.plan)))

    /**
     * Reads a1, merges a and b into a child with record c1, then reads b to its end: the child's reader (task 0) must
     * leave the child to the next batch, waiting `waitMs` before and after b's end. Closes both tasks.
     */
    def expectChildLeftToNextBatch(waitMs: Long): Unit =
      try {
        take(first, 1).map(_._1) shouldBe Seq("a1")
        put(fake, fake.mergeShards("s", a, b), Seq("c1"))
        first.next(waitMs) shouldBe false
        take(second, 2).map(_._1) shouldBe Seq("b1", "b2")
        second.next(300L) shouldBe false // hands over b's end
        first.next(waitMs) shouldBe false
        first.offset.children shouldBe empty
        second.offset.ends.loneElement.end shouldBe ShardEnd
      } finally {
        first.close()
        second.close()
      }
  }

  test("given a merge of shards read by two tasks, when both parents end, then the first parent's task reads the " +
    "child, only after the other task has handed over its parent's last row") {
    val t = new TwoParents
    import t.{fake, first, lineage, second, store}
    val (a, b) = (t.a, t.b)
    try {
      take(first, 1).map(_._1) shouldBe Seq("a1")
      val child = fake.mergeShards("s", a, b)
      put(fake, child, Seq("c1"))
      // The child's reader waits for the other task: nothing of the child comes while b's rows are not handed over.
      first.next(700L) shouldBe false
      take(second, 2).map(_._1) shouldBe Seq("b1", "b2")
      second.next(300L) shouldBe false // hands over b's end
      take(first, 1).map(_._1) shouldBe Seq("c1")
      first.offset.children shouldBe Map(ShardRef("s", child) -> Seq(a, b))
      second.offset.children shouldBe empty
      second.offset.ends.loneElement.end shouldBe ShardEnd
    } finally {
      first.close()
      second.close()
    }
  }

  test(
    "given a merge's parent recorded as ended by an earlier run of the batch, when the batch runs again with a slow " +
      "reader of that parent, then the child's rows do not come before the parent's: the next batch reads the child") {
    val t = new TwoParents
    import t.{b, lineage, store}
    // The earlier run's task 1 handed b over to its end (rows its sink may never have committed) and said so.
    store.recordIfAbsent(TaskEndRecord(
      1L,
      lineage.slot(ShardRef("s", b)).get,
      Seq(ShardEndRecord("s", b, 1L, TrimHorizon, ShardEnd, 0L)),
      Some("an earlier run")))
    // It does not count: b's rows are still to come; b's end, handed over, cannot replace it.
    t.expectChildLeftToNextBatch(waitMs = 700L)
  }

  test(
    "given a merge's parent recorded as ended by a task attempt that failed, when Spark runs that task again slowly, " +
      "then the child's rows do not come before the re-run parent's: the next batch reads the child") {
    val t = new TwoParents(secondAttempt = 1)
    t.recordSecondsFailedAttempt()
    t.second.offset.task shouldBe 1 // the retry of task 1 starts: it records that it runs again before it reads
    // The failed attempt's record does not count while b is read again, nor does the retry's end of b.
    t.expectChildLeftToNextBatch(waitMs = 1200L)
  }

  test(
    "given a retried task reading a merge's first parent, when the other parent's task records that it ended, then " +
      "the retry does not read the child, whose parent's rows it cannot know were written: the next batch reads it") {
    val t = new TwoParents(firstAttempt = 1)
    import t.{fake, first, second}
    val (a, b) = (t.a, t.b)
    try {
      take(first, 1).map(_._1) shouldBe Seq("a1")
      val child = fake.mergeShards("s", a, b)
      put(fake, child, Seq("c1"))
      take(second, 2).map(_._1) shouldBe Seq("b1", "b2")
      second.next(300L) shouldBe false // hands over b's end and records it
      first.next(1200L) shouldBe false
      first.offset.children shouldBe empty
      first.offset.ends.loneElement.end shouldBe ShardEnd
    } finally {
      first.close()
      second.close()
    }
  }

  test("given enhanced fan-out, when subscriptions end every few hundred ms, then every record comes once, in order") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    fake.fanOut.lifetimeMillis = 300L
    val consumer = fake.registerConsumer(fake.streamArn("s"), "q").arn
    val s = settings(fanOut = Map("s" -> FanOutReaderSettings(consumer, 30000L, 5)))
    val r = rows(fake, Seq(shard0), s = s)
    try {
      val expected = (1 to 30).map(i => s"e$i")
      val producer = new Thread(() => expected.foreach { v => put(fake, shard0, Seq(v)); Thread.sleep(100L) })
      producer.start()
      take(r, 30, withinMs = 20000L).map(_._1) shouldBe expected
      producer.join()
      fake.callsOf("SubscribeToShard") should be >= 2 // renewed at least once (one subscribe per second at most)
      r.next(100L) shouldBe false
    } finally {
      r.close()
      SubscriptionCache.shared.evict(0L)
    }
  }

  test("given enhanced fan-out on an emulator that names no children, when the shard splits, then the task finds its " +
    "end by itself and reads the children") {
    withFanOut(Seq("p1"), shape = _.sendChildShards = false) { (fake, r) =>
      take(r, 1).map(_._1) shouldBe Seq("p1")
      val children = splitAndPut(fake)
      take(r, 2, withinMs = 15000L).map(_._1).toSet shouldBe children
    }
  }

  test("given an endpoint refusing connections for a moment, when a polling task reads, then it rides it out") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    put(fake, shard0, Seq("a", "b"))
    fake.failNextCalls("GetShardIterator", 4)(new UnreachableException("Connection refused (injected)"))
    val r = rows(fake, Seq(shard0))
    try {
      take(r, 2).map(_._1) shouldBe Seq("a", "b")
      fake.shardIteratorCalls shouldBe 5
    } finally r.close()
  }

  test("given enhanced fan-out and a throttled end check of a caught-up shard, when the task reads on, then it backs " +
    "off without failing and still follows the shard into its children") {
    withFanOut(Seq("p1"), shape = _.sendChildShards = false) { (fake, r) =>
      take(r, 1).map(_._1) shouldBe Seq("p1")
      fake.failNextCalls("GetShardIterator", 2)(new ThrottledException("LimitExceeded (injected)"))
      r.next(500L) shouldBe false // no failure: the end check waits and asks again
      val children = splitAndPut(fake)
      take(r, 2, withinMs = 15000L).map(_._1).toSet shouldBe children
      r.offset.ends.find(_.shardId == shard0).get.stats.get.throttledCalls should be >= 2L
    }
  }

  test("given enhanced fan-out, when a caught-up subscription goes silent (a connection dropped without a close), " +
    "then it is replaced after kinesis.subscribeToShard.timeout and the records put since arrive") {
    withFanOut(Seq("before"), silenceMs = 1000L, shape = _.heartbeatMillis = 200L) { (fake, r) =>
      take(r, 1).map(_._1) shouldBe Seq("before")
      fake.fanOut.dropConnectionsSilently()
      put(fake, shard0, Seq("after"))
      take(r, 1, withinMs = 5000L).map(_._1) shouldBe Seq("after")
      fake.callsOf("SubscribeToShard") shouldBe 2
    }
  }

  test("awslabs/spark-sql-kinesis-connector#91: given enhanced fan-out behind empty events (records ahead) that " +
    "outlast a subscription, when the task reads on, then each renewal goes on from the last continuation sequence " +
    "number and the records arrive") {
    val shape = (f: FakeFanOut) => {
      f.emptyEventsAhead("s", shard0, 5)
      f.eventsPerSubscription = 2
    }
    withFanOut(Seq("a", "b", "c"), shape = shape) { (fake, r) =>
      take(r, 3, withinMs = 8000L).map(_._1) shouldBe Seq("a", "b", "c")
      fake.callsOf("SubscribeToShard") shouldBe 3 // 2 + 2 + 1 empty events, then the records
    }
  }

  test("FLINK-38814: given enhanced fan-out and ResourceInUse arriving as the subscription's first error while " +
    "another subscription holds the shard, when that one closes, then the task subscribes again and reads every " +
    "record") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    fake.fanOut.refusalsAsSignals = true
    val consumer = fake.registerConsumer(fake.streamArn("s"), "q").arn
    val held = fake.subscribeToShard(consumer, shard0, IteratorStart.TrimHorizon) // a task elsewhere, ending soon
    put(fake, shard0, Seq("a", "b"))
    val r = rows(fake, Seq(shard0), s = settings(fanOut = Map("s" -> FanOutReaderSettings(consumer, 30000L, 5))))
    try {
      eventually(Timeout(Span(5, Seconds)))(fake.callsOf("SubscribeToShard") should be >= 3) // refused at least once
      held.cancel()
      take(r, 2).map(_._1) shouldBe Seq("a", "b")
      r.offset.ends.loneElement.stats.get.throttledCalls should be > 0L
    } finally {
      r.close()
      SubscriptionCache.shared.evict(0L)
    }
  }

  test("FLINK-39540: given enhanced fan-out and a split shard whose last event comes on its own, without records or " +
    "continuation sequence number, before the subscription completes, when the task reads on, then it follows the " +
    "children without an error") {
    withFanOut(Seq("p1"), shape = _.finalEventApart = true) { (fake, r) =>
      take(r, 1).map(_._1) shouldBe Seq("p1")
      val children = splitAndPut(fake)
      take(r, 2, withinMs = 15000L).map(_._1).toSet shouldBe children
      r.offset.ends.find(_.shardId == shard0).get.end shouldBe ShardEnd
    }
  }

  test("FLINK-36947: given an idle shard whose polls are throttled, when the task polls it, then it stays within 5 " +
    "calls per second, backs off without failing, and reads the record put later once") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    fake.throttleNextGetRecords(3)
    val r = rows(fake, Seq(shard0), s = settings(pollMs = 200L))
    try {
      val started = wall()
      r.next(1200L) shouldBe false
      val seconds = (wall() - started) / 1000.0
      fake.getRecordsCalls.toDouble should be <= (seconds * 5.0 + 1.0)
      put(fake, shard0, Seq("late"))
      take(r, 1).map(_._1) shouldBe Seq("late")
      r.next(300L) shouldBe false
      r.offset.ends.loneElement.stats.get.throttledCalls shouldBe 3
    } finally r.close()
  }
}

private[realtime] object RealTimeRowsSuite {

  /** The real-time suites' reading settings: polls every `pollMs`, short back-off, fan-out end checks every 100 ms. */
  def settings(pollMs: Long = 20L, fanOut: Map[String, FanOutReaderSettings] = Map.empty): ReaderSettings =
    ReaderSettings(
      ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
      10000,
      pollMs,
      Long.MaxValue,
      60000L,
      5L,
      20L,
      dropMisroutedRecords = false,
      fanOut = fanOut,
      fanOutEndCheckMs = Some(100L))
}
