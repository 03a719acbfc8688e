package io.github.sparkkinesis.source.reading

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.metrics.ReadMetrics
import io.github.sparkkinesis.offsets.{ShardPosition, ShardRead}
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, AtTimestamp, ShardEnd, TrimHorizon}

/** The shard reader on enhanced fan-out pages, against the fake client's subscriptions (AWS behaviour). */
class FanOutPagesSuite extends AnyFunSuite with Matchers with BeforeAndAfterEach {

  private val shard = "shardId-000000000000"
  private val clientSettings = ClientSettings(None, None, None, RetrySettings(0, 1, 2))

  override def afterEach(): Unit = SubscriptionCache.shared.evict(0L)

  private final class Setup(records: Int, shards: Int = 1) {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", shards)
    val consumerArn: String = fake.registerConsumer(fake.streamArn("s"), "q").arn
    val expected: Seq[String] = put(records)
    val store = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())

    def put(n: Int, prefix: String = "r"): Seq[String] =
      (1 to n).map { i => fake.putRecordToShard("s", shard, s"$prefix$i".getBytes(UTF_8)); s"$prefix$i" }

    def settings(maxRecords: Long = 100000L, maxRetries: Int = 5, fanOut: Boolean = true): ReaderSettings =
      ReaderSettings(
        clientSettings,
        10000,
        0L,
        maxRecords,
        60000L,
        1L,
        2L,
        dropMisroutedRecords = false,
        fanOut = if (fanOut) Map("s" -> FanOutReaderSettings(consumerArn, 30000L, maxRetries)) else Map.empty)

    /** One task: (values read, where the batch ended). */
    def read(
        batch: Long,
        start: ShardPosition,
        s: ReaderSettings = settings(),
        id: String = shard,
        read: ShardRead = ShardRead.Unbounded,
        listedClosed: Boolean = false): (Seq[String], ShardPosition) = {
      val partition = TaskShard("s", id, batch, start, None, read, listedClosed = listedClosed)
      val reader =
        new TaskReader(TaskPartition(batch, 0, Seq(partition)), s, store, fake, clock, ms => clock.advance(ms))
      val out = mutable.Buffer.empty[String]
      try while (reader.next()) out += new String(reader.get().getBinary(0), UTF_8)
      finally reader.close()
      (out.toVector, store.get(batch, 0).get.ends.head.end)
    }

    /** Batches from `start` until one reads nothing: every value read, and the last end. */
    def readBatches(
        start: ShardPosition,
        s: ReaderSettings = settings(),
        from: Long = 0L): (Seq[String], ShardPosition) = {
      var (batch, position, all) = (from, start, Vector.empty[String])
      var more = true
      while (more) {
        val (values, end) = read(batch, position, s)
        all ++= values
        more = values.nonEmpty && end != ShardEnd
        position = end
        batch += 1
      }
      (all, position)
    }
  }

  test("given records, when a task reads through a subscription, then it reads them all and records its end") {
    val t = new Setup(25)
    val (values, end) = t.read(0L, TrimHorizon)
    values shouldBe t.expected
    end shouldBe a[AfterSequenceNumber]
    t.fake.getRecordsCalls shouldBe 0
  }

  test("given a recorded end, when the batch is replayed through a new subscription, then it reads the same records") {
    val t = new Setup(30)
    val first = t.read(0L, TrimHorizon, t.settings(maxRecords = 12))
    SubscriptionCache.shared.evict(0L) // the replay runs on another executor
    t.put(5, "late")
    val replay = t.read(0L, TrimHorizon, t.settings(maxRecords = 12))
    first._1 shouldBe t.expected.take(12)
    replay shouldBe first
  }

  test("given a busy shard, when batches follow each other, then they reuse one subscription without gaps") {
    val t = new Setup(30)
    val (first, end) = t.read(0L, TrimHorizon, t.settings(maxRecords = 10))
    val (second, end2) = t.read(1L, end, t.settings(maxRecords = 10))
    val more = t.put(7, "x")
    val (third, _) = t.read(2L, end2)
    (first, second, third) shouldBe ((t.expected.take(10), t.expected.slice(10, 20), t.expected.drop(20) ++ more))
    t.fake.callsOf("SubscribeToShard") shouldBe 1
  }

  test("given a parked subscription, when the next task starts elsewhere, then it is cancelled and a new one opened") {
    val t = new Setup(20)
    t.read(0L, TrimHorizon, t.settings(maxRecords = 10))
    t.clock.advance(6000L)
    val (again, _) = t.read(1L, TrimHorizon) // a replan from the start (say after a restart)
    again shouldBe t.expected
    t.fake.callsOf("SubscribeToShard") shouldBe 2
  }

  test(
    "given subscriptions that end after two events, when a long backlog is read, then no record is lost or doubled") {
    val t = new Setup(95)
    t.fake.fanOut.recordsPerEvent = 10
    t.fake.fanOut.eventsPerSubscription = 2
    val (values, _) = t.readBatches(TrimHorizon)
    values shouldBe t.expected
    t.fake.callsOf("SubscribeToShard") should be >= 5
  }

  test("given five minutes between batches, when the next task takes the expired subscription, then it resubscribes") {
    val t = new Setup(10)
    val (first, end) = t.read(0L, TrimHorizon)
    t.clock.advance(5 * 60 * 1000L + 1)
    val more = t.put(4, "y")
    val (second, _) = t.read(1L, end)
    first ++ second shouldBe t.expected ++ more
    t.fake.callsOf("SubscribeToShard") shouldBe 2
  }

  test("given a subscription refused once and one that ends after five minutes, when tasks read on, then the " +
    "readers' metrics count the subscribes, the refusal and the renewal, and no GetRecords call") {
    val t = new Setup(10)
    val s = t.settings().copy(query = s"fan-out-metrics-${java.util.UUID.randomUUID()}")
    t.fake.failNextCalls("SubscribeToShard", 1)(new SubscriptionBusyException("ResourceInUse (injected)"))
    val (first, end) = t.read(0L, TrimHorizon, s)
    t.clock.advance(5 * 60 * 1000L + 1)
    val more = t.put(4, "y")
    first ++ t.read(1L, end, s)._1 shouldBe t.expected ++ more
    val metrics = ReadMetrics.of(s.query, "s")
    metrics.subscribeToShardCalls.getCount shouldBe 3
    metrics.throttledCalls.getCount shouldBe 1
    metrics.subscriptionRenewals.getCount shouldBe 1
    metrics.recordsRead.getCount shouldBe 14
    metrics.getRecordsCalls.getCount shouldBe 0
  }

  test("given ResourceInUse and LimitExceeded on subscribe, when read, then it backs off and reads everything") {
    val t = new Setup(20)
    t.fake.failNextCalls("SubscribeToShard", 2)(new SubscriptionBusyException("ResourceInUse (injected)"))
    val (values, _) = t.read(0L, TrimHorizon)
    values shouldBe t.expected
    t.store.get(0L, 0).get.ends.head.stats.get.throttledCalls shouldBe 2
    val u = new Setup(5)
    u.fake.failNextCalls("SubscribeToShard", 1)(new ThrottledException("LimitExceeded (injected)"))
    u.read(0L, TrimHorizon)._1 shouldBe u.expected
  }

  test(
    "given a connection reset mid-read, when the task goes on, then it resubscribes after the last record received") {
    val t = new Setup(40)
    t.fake.fanOut.recordsPerEvent = 10
    val (first, end) = t.read(0L, TrimHorizon, t.settings(maxRecords = 15))
    t.fake.fanOut.resetConnections()
    val (rest, _) = t.read(1L, end)
    first ++ rest shouldBe t.expected
  }

  test("given subscriptions that keep failing, when retries run out, then the task fails naming the option") {
    val t = new Setup(5)
    t.fake.failNextCalls("SubscribeToShard", 10)(new SubscriptionBusyException("ResourceInUse (injected)"))
    val e = intercept[KinesisClientException](t.read(0L, TrimHorizon, t.settings(maxRetries = 3)))
    e.getMessage should include("kinesis.subscribeToShard.maxRetries")
  }

  test("given a missing consumer, when a task subscribes, then it fails at once without retrying") {
    val t = new Setup(5)
    t.fake.deregisterConsumer(t.consumerArn)
    intercept[ResourceMissingException](t.read(0L, TrimHorizon))
    t.fake.callsOf("SubscribeToShard") shouldBe 1
  }

  test("given a split shard, when its subscription names the children, then the parent is read to ShardEnd") {
    val t = new Setup(12)
    t.fake.splitShard("s", shard, BigInt(2).pow(127))
    val (values, end) = t.read(0L, TrimHorizon)
    values shouldBe t.expected
    end shouldBe ShardEnd
    t.fake.listShardsCalls shouldBe 0 // the event said so; no listing needed
  }

  test("given a split shard and no child shards in events (the emulator), when caught up, then the driver's " +
    "listing ends it, and the task lists nothing") {
    val t = new Setup(12)
    t.fake.fanOut.sendChildShards = false
    t.fake.splitShard("s", shard, BigInt(2).pow(127))
    val (values, end) = t.read(0L, TrimHorizon, listedClosed = true)
    values shouldBe t.expected
    end shouldBe ShardEnd
    t.fake.listShardsCalls shouldBe 0
  }

  test("given a shard that closed after the driver listed it and no child shards in events (the emulator), when " +
    "caught up, then the task ends at its last record without listing the stream; the next task ends the shard") {
    val t = new Setup(12)
    t.fake.fanOut.sendChildShards = false
    t.fake.splitShard("s", shard, BigInt(2).pow(127))
    val (values, end) = t.read(0L, TrimHorizon)
    val (none, end2) = t.read(1L, end, listedClosed = true)
    values shouldBe t.expected
    end shouldBe a[AfterSequenceNumber]
    (none, end2) shouldBe ((Nil, ShardEnd))
    t.fake.listShardsCalls shouldBe 0
  }

  test("given records followed at once by a long run of empty events (a sparse stretch on AWS), when a page is " +
    "fetched, then it hands the records over without first taking in the empty events") {
    val t = new Setup(3)
    t.fake.fanOut.emptyEventsAfterRecords = 100000
    val pages =
      ShardPages.open(t.fake, TaskShard("s", shard, 0L, TrimHorizon, None), t.settings(), t.clock, t.clock.advance)
    val page = pages.fetch(Long.MaxValue, 10000).get
    pages.close(handedOver = false)
    page.records.map(r => new String(r.data, UTF_8)) shouldBe t.expected
    t.fake.fanOut.eventsSent should be <= 2L // the records' event, and the empty one that ends the page
  }

  test("given an idle shard at LATEST, when a task reads, then it ends at once with nothing, parked or not") {
    val t = new Setup(0)
    val start = AtTimestamp(t.clock())
    val (none, end) = t.read(0L, start)
    none shouldBe empty
    end shouldBe start
    val waited = t.clock()
    val (again, _) = t.read(1L, end)
    again shouldBe empty
    (t.clock() - waited) should be <= FanOutPages.TipWaitMs
  }

  test("given an AT_TIMESTAMP start in Kinesis' future, when a task reads, then it ends empty at the tip") {
    val t = new Setup(3)
    val start = AtTimestamp(t.clock() + 60000L)
    t.read(0L, start) shouldBe ((Nil, start))
  }

  test("given an AvailableNow bound inside an event, when read, then later records stay for the next batch") {
    val t = new Setup(5)
    t.clock.advance(1000L)
    val bound = t.clock()
    val later = t.put(5, "after")
    val (first, end) = t.read(0L, TrimHorizon, read = ShardRead(None, Some(bound)))
    first shouldBe t.expected
    t.read(1L, end)._1 shouldBe later
  }

  test("given batches read by polling, when the query switches to a subscription, then it goes on without gaps") {
    val t = new Setup(20)
    val (polled, end) = t.read(0L, TrimHorizon, t.settings(maxRecords = 8, fanOut = false))
    val (pushed, end2) = t.read(1L, end)
    val more = t.put(3, "z")
    val (polledAgain, _) = t.read(2L, end2, t.settings(fanOut = false))
    polled ++ pushed ++ polledAgain shouldBe t.expected ++ more
  }

  test("given a parked subscription whose connection dropped without a close, when later tasks wait at the tip, then " +
    "it is replaced within kinesis.subscribeToShard.timeout and the records put since are read") {
    val t = new Setup(5)
    val (first, end) = t.read(0L, TrimHorizon)
    t.fake.fanOut.dropConnectionsSilently()
    val more = t.put(3, "after")
    val (none, end2) = t.read(1L, end) // silent for 1.2 s only: nothing to say it is dead yet
    t.clock.advance(30000L) // the next trigger, after the timeout
    val (second, _) = t.read(2L, end2)
    (first, none, second) shouldBe ((t.expected, Nil, more))
    t.fake.callsOf("SubscribeToShard") shouldBe 2
  }

  test("given an idle shard whose subscription sends an empty event every 5 s (AWS), when tasks wait at the tip for " +
    "longer than kinesis.subscribeToShard.timeout in all, then the subscription is kept") {
    val t = new Setup(5)
    var (values, end) = t.read(0L, TrimHorizon)
    (1 to 6).foreach { batch =>
      t.clock.advance(10000L)
      val (none, next) = t.read(batch.toLong, end)
      none shouldBe empty
      end = next
    }
    values shouldBe t.expected
    t.fake.callsOf("SubscribeToShard") shouldBe 1
  }

  test("given a closed shard whose end check is throttled, when the task is caught up, then it backs off instead of " +
    "failing, and a later task ends the shard") {
    val t = new Setup(12)
    t.fake.fanOut.sendChildShards = false
    t.fake.splitShard("s", shard, BigInt(2).pow(127))
    t.fake.failNextCalls("GetShardIterator", 1)(new ThrottledException("LimitExceeded (injected)"))
    val (values, end) = t.read(0L, TrimHorizon, listedClosed = true)
    val (none, end2) = t.read(1L, end, listedClosed = true)
    values shouldBe t.expected
    end shouldBe a[AfterSequenceNumber]
    (none, end2) shouldBe ((Nil, ShardEnd))
  }

  test("given a subscription a killed executor left open, when a task subscribes, then it takes over after 5 s (AWS)") {
    val t = new Setup(10)
    t.fake.subscribeToShard(t.consumerArn, shard, IteratorStart.TrimHorizon) // the dead executor's, never cancelled
    val started = t.clock()
    val (values, _) = t.read(0L, TrimHorizon)
    values shouldBe t.expected
    (t.clock() - started) should be >= 5000L // refused (ResourceInUse) until AWS lets the new call take over
    t.store.get(0L, 0).get.ends.head.stats.get.throttledCalls should be > 0L
  }

  test(
    "awslabs/spark-sql-kinesis-connector#91: given a start at LATEST's instant behind empty events (records ahead) " +
      "that outlast a subscription, when a task reads, then each renewal goes on from the last event's continuation " +
      "sequence number, not from the instant again, and the records after them are read") {
    // Given a shard whose subscriptions push 8 empty events before its records, and end after 3 events (AWS: 5 minutes)
    val t = new Setup(0)
    val start = AtTimestamp(t.clock())
    t.fake.fanOut.emptyEventsAhead("s", shard, 8)
    t.fake.fanOut.eventsPerSubscription = 3
    val expected = t.put(5)

    // When
    val (values, end) = t.read(0L, start)

    // Then
    values shouldBe expected
    end shouldBe a[AfterSequenceNumber]
    t.fake.callsOf("SubscribeToShard") shouldBe 3 // 3 + 3 + 2 empty events, then the records
  }

  test("FLINK-38814: given a subscription a killed executor left open and ResourceInUse arriving as the new " +
    "subscription's first error (the SDK's asynchronous client), when tasks read, then the reader backs off, takes " +
    "over after 5 s and reads every record, and later batches go on") {
    // Given
    val t = new Setup(10)
    t.fake.fanOut.refusalsAsSignals = true
    t.fake.subscribeToShard(t.consumerArn, shard, IteratorStart.TrimHorizon) // the dead executor's, never cancelled
    val started = t.clock()

    // When
    val (values, end) = t.read(0L, TrimHorizon)
    val later = t.put(3, "later")
    val (next, _) = t.read(1L, end)

    // Then
    values shouldBe t.expected
    next shouldBe later
    (t.clock() - started) should be >= 5000L // refused until AWS lets the new call take over,
    (t.clock() - started) should be < 10000L // and not left waiting on the refused subscription
    t.store.get(0L, 0).get.ends.head.stats.get.throttledCalls should be > 0L
  }

  test("FLINK-39540: given a split shard whose last event comes on its own, without records or continuation " +
    "sequence number, before the subscription completes, when a batch ends between the last record and that event " +
    "and the next subscribes after that record, then the parent ends at ShardEnd without an error") {
    // Given
    val t = new Setup(12)
    t.fake.fanOut.finalEventApart = true
    t.fake.splitShard("s", shard, BigInt(2).pow(127))

    // When the first task stops at the parent's last record (its limit), before the last event
    val (values, end) = t.read(0L, TrimHorizon, t.settings(maxRecords = 12))
    SubscriptionCache.shared.evict(0L) // the next task runs on another executor: a new subscription at the boundary
    val (none, end2) = t.read(1L, end)

    // Then
    values shouldBe t.expected
    end shouldBe a[AfterSequenceNumber]
    (none, end2) shouldBe ((Nil, ShardEnd))
    t.fake.listShardsCalls shouldBe 0
  }
}
