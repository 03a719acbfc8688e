package io.github.sparkkinesis.source.reading

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.hadoop.conf.Configuration
import org.scalatest.BeforeAndAfterEach
import org.scalatest.concurrent.Eventually.eventually
import org.scalatest.concurrent.PatienceConfiguration.Timeout
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import org.scalatest.time.{Seconds, Span}

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, TrimHorizon}

/**
 * Tasks cut short (a `limit` or `df.isEmpty()` in foreachBatch, a killed speculative copy, a sibling shard's failure):
 * no subscription is parked at a position whose records the task did not hand over, and a closed reader never
 * subscribes again.
 */
class CutShortTaskSuite extends AnyFunSuite with Matchers with BeforeAndAfterEach {

  override def afterEach(): Unit = SubscriptionCache.shared.evict(0L)

  private final class Setup(shards: Int, records: Int, fanOut: Boolean = true) {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val ids: Seq[String] = fake.createStream("s", shards)
    val consumerArn: String = fake.registerConsumer(fake.streamArn("s"), "q").arn
    val sequences: Map[String, Seq[String]] = ids.map { id =>
      id -> (1 to records).map(i => fake.putRecordToShard("s", id, s"$id-$i".getBytes(UTF_8)))
    }.toMap
    val store = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())
    private val settings = ReaderSettings(
      ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
      10000,
      0L,
      100000L,
      60000L,
      1L,
      2L,
      dropMisroutedRecords = false,
      fanOut = if (fanOut) Map("s" -> FanOutReaderSettings(consumerArn, 30000L, 5)) else Map.empty)

    def task(batch: Long, client: KinesisClient = fake): TaskReader =
      new TaskReader(
        TaskPartition(batch, 0, ids.map(id => TaskShard("s", id, batch, TrimHorizon, None))),
        settings,
        store,
        client,
        clock,
        ms => clock.advance(ms))

    def parkedAt(shardId: String) = SubscriptionCache.shared.parkedAt(SubscriptionKey(consumerArn, shardId))
  }

  private def value(task: TaskReader): String = new String(task.get().getBinary(0), UTF_8)

  private def readAll(task: TaskReader): Seq[String] =
    try Iterator.continually(task.next()).takeWhile(identity).map(_ => value(task)).toVector
    finally task.close()

  /**
   * The batch's reader threads still alive once each had 5 s to end: a pool's termination, which `close` awaits, comes
   * as its last worker leaves its loop, a moment before that thread has ended.
   */
  private def readerThreadsLeft(batch: Long): Seq[Thread] = {
    val readers = Thread.getAllStackTraces.keySet.asScala.filter(_.getName == s"kinesis-read batch $batch task 0").toSeq
    readers.foreach(_.join(5000))
    readers.filter(_.isAlive)
  }

  test("given a task cut short after the first row of a page, when it closes, then its subscription is cancelled, " +
    "not parked, and the next attempt reads every record") {
    // Given
    val t = new Setup(shards = 1, records = 50)
    val cut = t.task(0L)

    // When it hands over one row (a limit) and is closed
    cut.next() shouldBe true
    cut.close()

    // Then
    t.parkedAt(t.ids.head) shouldBe None
    t.fake.fanOut.openSubscriptions shouldBe 0
    t.store.get(0L, 0) shouldBe None
    readAll(t.task(0L)) shouldBe (1 to 50).map(i => s"${t.ids.head}-$i")
  }

  test("given a task whose other shard's subscription blocks inside a page, when the task is closed, then that " +
    "reader stops before it is closed, never subscribes again, and only the reader that handed over all its rows " +
    "is parked, at its end") {
    // Given shard 0's first subscription blocks in its first page; shard 1 reads its five records
    val t = new Setup(shards = 2, records = 5)
    val client = new BlockingClient(t.fake, t.ids.head)
    val task = t.task(7L, client)
    val handedOver = (1 to 5).map { _ => task.next() shouldBe true; value(task) }
    client.entered.await(10, TimeUnit.SECONDS) shouldBe true

    // When
    task.close()
    val subscribedBeforeClose = client.blockedSubscribes.get
    eventually(Timeout(Span(10, Seconds)))(readerThreadsLeft(7L) shouldBe empty)

    // Then
    handedOver shouldBe (1 to 5).map(i => s"${t.ids(1)}-$i")
    client.blockedSubscribes.get shouldBe subscribedBeforeClose
    subscribedBeforeClose shouldBe 1
    t.parkedAt(t.ids.head) shouldBe None
    t.parkedAt(t.ids(1)) shouldBe Some(AfterSequenceNumber(t.sequences(t.ids(1)).last))
    SubscriptionCache.shared.evict(0L)
    t.fake.fanOut.openSubscriptions shouldBe 0 // none left open behind the task's back
  }

  test("given a polling task of three shards cut short while its readers wait to hand over rows, when it closes, " +
    "then its reader threads have stopped and the next attempt reads every record once") {
    // Given more rows than the task's queue holds, so every reader waits to hand over
    val t = new Setup(shards = 3, records = 3000, fanOut = false)
    val cut = t.task(9L)

    // When
    cut.next() shouldBe true
    cut.close()

    // Then
    readerThreadsLeft(9L) shouldBe empty
    t.store.get(9L, 0) shouldBe None
    readAll(t.task(9L)).sorted shouldBe t.ids.flatMap(id => (1 to 3000).map(i => s"$id-$i")).sorted
  }

  /**
   * The fake client, except that the first subscription to shard `blocked` blocks inside its first page until its
   * thread is interrupted, and then fails as a connection reset would (the interruption kept for the reader to see).
   */
  private final class BlockingClient(fake: FakeKinesisClient, blocked: String) extends KinesisClient with FanOutClient {
    val entered = new CountDownLatch(1)
    val blockedSubscribes = new AtomicInteger()

    override def listShards(stream: String): Seq[ShardDescription] = fake.listShards(stream)
    override def shardIterator(stream: String, shardId: String, start: IteratorStart): String =
      fake.shardIterator(stream, shardId, start)
    override def getRecords(stream: String, iterator: String, limit: Int): RecordBatch =
      fake.getRecords(stream, iterator, limit)
    override def streamArn(stream: String): String = fake.streamArn(stream)
    override def describeConsumer(streamArn: String, name: String): Option[ConsumerDescription] =
      fake.describeConsumer(streamArn, name)
    override def describeConsumerByArn(arn: String): Option[ConsumerDescription] = fake.describeConsumerByArn(arn)
    override def registerConsumer(streamArn: String, name: String, tags: Map[String, String]): ConsumerDescription =
      fake.registerConsumer(streamArn, name, tags)
    override def listConsumers(streamArn: String): Seq[ConsumerDescription] = fake.listConsumers(streamArn)
    override def consumerTags(arn: String): Map[String, String] = fake.consumerTags(arn)
    override def tagConsumer(arn: String, tags: Map[String, String]): Unit = fake.tagConsumer(arn, tags)
    override def deregisterConsumer(arn: String): Unit = fake.deregisterConsumer(arn)

    override def subscribeToShard(consumerArn: String, shardId: String, start: IteratorStart): ShardSubscription =
      if (shardId == blocked && blockedSubscribes.getAndIncrement() == 0) new ShardSubscription {
        override def next(timeoutMs: Long): Option[SubscriptionSignal] = {
          entered.countDown()
          try new CountDownLatch(1).await(30, TimeUnit.SECONDS)
          catch { case _: InterruptedException => Thread.currentThread().interrupt() }
          Some(SubscriptionSignal.Failed(new KinesisClientException("Connection reset (injected)")))
        }
        override def cancel(): Unit = ()
      }
      else fake.subscribeToShard(consumerArn, shardId, start)
  }
}
