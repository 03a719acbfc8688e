package io.github.sparkkinesis.source.reading

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.offsets.{ShardPosition, ShardRead}
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, AtTimestamp, TrimHorizon}

/** How a task reads where AWS differs from the emulator, and within the bounds the driver sets for a batch. */
class ShardReaderOnAwsSuite extends AnyFunSuite with Matchers {

  private val shard = "shardId-000000000000"

  private def settings(maxTimeMs: Long = 60000L, perFetch: Int = 10000) =
    ReaderSettings(
      ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
      perFetch,
      0L,
      100000L,
      maxTimeMs,
      1L,
      2L,
      dropMisroutedRecords = false)

  private def newStore() = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())

  private def read(
      fake: FakeKinesisClient,
      store: HadoopShardEndStore,
      start: ShardPosition = TrimHorizon,
      bounds: ShardRead = ShardRead.Unbounded,
      s: ReaderSettings = settings(),
      executorClock: () => Long = () => System.currentTimeMillis()): Seq[String] = {
    val reader = new TaskReader(
      TaskPartition(0L, 0, Seq(TaskShard("s", shard, 0L, start, None, bounds))),
      s,
      store,
      fake,
      executorClock)
    val out = mutable.Buffer.empty[String]
    while (reader.next()) out += new String(reader.get().getBinary(0), UTF_8)
    out.toVector
  }

  private def withRecords(clock: ManualClock, payloads: Seq[String]): FakeKinesisClient = {
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    payloads.foreach(p => fake.putRecordToShard("s", shard, p.getBytes(UTF_8)))
    fake
  }

  test("given empty pages with MillisBehindLatest above 0 before the records, when the time limit passes on them, " +
    "then the first attempt reads on to the records instead of ending at its start, with a read-rate cap or not") {
    Seq(None, Some(1024L)).foreach { cap =>
      val fake = withRecords(new ManualClock(), Seq("a", "b"))
      fake.emptyPagesAhead("s", shard, 4)
      val store = newStore()
      // The time limit is already over when the task starts: only the empty pages stand between it and the records.
      val s = settings(maxTimeMs = 0L).copy(maxBytesPerSecondPerShard = cap)
      withClue(s"cap $cap: ")(read(fake, store, s = s) shouldBe Seq("a", "b"))
      store.get(0L, 0).get.ends.head.end shouldBe a[AfterSequenceNumber]
    }
  }

  test("given a replay through empty pages, when read, then it reaches the recorded end and yields the same records") {
    val fake = withRecords(new ManualClock(), Seq("a", "b", "c"))
    val store = newStore()
    val first = read(fake, store)
    fake.emptyPagesAhead("s", shard, 3)
    read(fake, store) shouldBe first
  }

  test("given an executor clock far behind the driver's, when the position is an AT_TIMESTAMP the driver chose, " +
    "then the records after it are read all the same") {
    val service = new ManualClock()
    val fake = withRecords(service, Nil)
    val queryStart = service()
    service.advance(5)
    fake.putRecordToShard("s", shard, "after-start".getBytes(UTF_8))
    val behind = () => queryStart - 3600000L // an executor whose clock is an hour slow
    read(fake, newStore(), start = AtTimestamp(queryStart), executorClock = behind) shouldBe Seq("after-start")
  }

  test("given an AT_TIMESTAMP position in the service's future, when read, then the batch ends at its start, empty") {
    val service = new ManualClock()
    val fake = withRecords(service, Seq("old"))
    val store = newStore()
    val ahead = AtTimestamp(service() + 60000L) // the driver's clock ran a minute ahead of Kinesis'
    read(fake, store, start = ahead) shouldBe empty
    store.get(0L, 0).get.ends.head.end shouldBe ahead
  }

  test("given a read-limit share, when read, then the first attempt stops at exactly that many records") {
    val fake = withRecords(new ManualClock(), (1 to 20).map(i => s"r$i"))
    val store = newStore()
    read(fake, store, bounds = ShardRead(Some(7L), None), s = settings(perFetch = 5)) shouldBe (1 to 7).map(i => s"r$i")
    store.get(0L, 0).get.ends.head.stats.map(_.moreAvailable) shouldBe Some(true)
    // Then a replay reads the same seven, whatever the bounds say now.
    read(fake, store) shouldBe (1 to 7).map(i => s"r$i")
  }

  test("given an AvailableNow bound, when records arrived after it, then the batch ends before them, even mid-page") {
    val service = new ManualClock()
    val fake = withRecords(service, Seq("before-1", "before-2", "before-3"))
    service.advance(100)
    val bound = service()
    Seq("after-1", "after-2").foreach(p => fake.putRecordToShard("s", shard, p.getBytes(UTF_8)))
    val store = newStore()
    read(fake, store, bounds = ShardRead(None, Some(bound))) shouldBe Seq("before-1", "before-2", "before-3")
    val end = store.get(0L, 0).get.ends.head
    end.recordCount shouldBe 3
    end.stats.map(_.moreAvailable) shouldBe Some(false)
    read(fake, store) shouldBe Seq("before-1", "before-2", "before-3")
  }

  test("given an AvailableNow bound before every record, when read, then the batch ends at its start") {
    val service = new ManualClock()
    val fake = withRecords(service, Nil)
    val bound = service()
    service.advance(10)
    fake.putRecordToShard("s", shard, "late".getBytes(UTF_8))
    val store = newStore()
    read(fake, store, bounds = ShardRead(None, Some(bound))) shouldBe empty
    store.get(0L, 0).get.ends.head.end shouldBe TrimHorizon
  }
}
