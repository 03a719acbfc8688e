package io.github.sparkkinesis.source.reading

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.aggregation.KplTestAggregates
import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, ShardEnd, TrimHorizon}

class ShardReaderSuite extends AnyFunSuite with Matchers {

  private val shard = "shardId-000000000000"

  private def settings(maxRecords: Long = 100000L, perFetch: Int = 10000, dropMisrouted: Boolean = false) =
    ReaderSettings(
      ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
      perFetch,
      0L,
      maxRecords,
      60000L,
      1L,
      2L,
      dropMisrouted)

  private def newStore() = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())

  private def readAll(
      fake: FakeKinesisClient,
      start: ShardPosition = TrimHorizon,
      s: ReaderSettings = settings(),
      store: HadoopShardEndStore = newStore(),
      range: Option[HashKeyRange] = None): Seq[(String, Long)] = {
    val reader = new TaskReader(TaskPartition(0L, 0, Seq(TaskShard("s", shard, 0L, start, range))), s, store, fake)
    val out = mutable.Buffer.empty[(String, Long)]
    while (reader.next()) out += (new String(reader.get().getBinary(0), UTF_8) -> reader.get().getLong(6))
    out.toVector
  }

  private def oneShard(records: Int): (FakeKinesisClient, Seq[String]) = {
    val fake = new FakeKinesisClient()
    fake.createStream("s", 1)
    (fake, (1 to records).map { i => fake.putRecordToShard("s", shard, s"r$i".getBytes(UTF_8)); s"r$i" })
  }

  test("given records, when read, then the reader stops at the tip and records where it ended") {
    val (fake, expected) = oneShard(25)
    val store = newStore()
    readAll(fake, store = store).map(_._1) shouldBe expected
    val end = store.get(0L, 0).get.ends.head
    end.recordCount shouldBe 25
    end.end shouldBe a[AfterSequenceNumber]
  }

  test("given kinesis-mock's MillisBehindLatest, 0 on a full page short of the shard's end whose records arrived in " +
    "the same second as its last, when a batch read reads the shard in pages of 7, then it reads every record") {
    // Given: the fake's clock stands still, so all 30 records arrive in the same second
    val (fake, expected) = oneShard(30)
    fake.lagFromShardsLastRecord = true
    // When
    val read = readAll(fake, s = settings(perFetch = 7).copy(readsWholeRange = true))
    // Then: a full page at lag 0 is not taken for the tip; the first non-full page is
    read.map(_._1) shouldBe expected
    fake.getRecordsCalls shouldBe 5
  }

  test("given throttling on the next GetRecords calls, when read, then it backs off and loses nothing") {
    val (fake, expected) = oneShard(30)
    fake.throttleNextGetRecords(3)
    readAll(fake, s = settings(perFetch = 7)).map(_._1) shouldBe expected
  }

  test("given an iterator that expires mid-read, when read, then it is renewed from the last record read") {
    val (fake, expected) = oneShard(30)
    val reader = new TaskReader(
      TaskPartition(0L, 0, Seq(TaskShard("s", shard, 0L, TrimHorizon, None))),
      settings(perFetch = 10),
      newStore(),
      fake)
    val out = mutable.Buffer.empty[String]
    while (reader.next()) {
      out += new String(reader.get().getBinary(0), UTF_8)
      if (out.size == 10) fake.expireNextIterator()
    }
    out shouldBe expected
  }

  test("given a closed shard, when read to its end, then the recorded end is SHARD_END") {
    val (fake, expected) = oneShard(5)
    fake.splitShard("s", shard, BigInt(2).pow(127))
    val store = newStore()
    readAll(fake, store = store).map(_._1) shouldBe expected
    store.get(0L, 0).get.ends.head.end shouldBe ShardEnd
  }

  test("given a recorded end, when read again later, then exactly the recorded records come back") {
    val (fake, expected) = oneShard(12)
    val store = newStore()
    readAll(fake, store = store)
    (13 to 20).foreach(i => fake.putRecordToShard("s", shard, s"r$i".getBytes(UTF_8)))
    readAll(fake, store = store, s = settings(perFetch = 5)).map(_._1) shouldBe expected
  }

  test("given a recorded end whose records were trimmed, when read again, then it fails saying records were lost") {
    val (fake, _) = oneShard(12)
    val store = newStore()
    readAll(fake, store = store)
    fake.trimShard("s", shard, 12)
    fake.putRecordToShard("s", shard, "r13".getBytes(UTF_8))
    intercept[IllegalStateException](readAll(fake, store = store)).getMessage should include("lost")
  }

  test("given KPL aggregates among plain records, when read, then every sub-record is a row with its number") {
    val fake = new FakeKinesisClient()
    fake.createStream("s", 1)
    val aggregate = KplTestAggregates.aggregate((0 until 3).map(i => (s"pk$i", None, s"sub$i".getBytes(UTF_8))))
    fake.putRecordToShard("s", shard, "plain".getBytes(UTF_8))
    fake.putRecordToShard("s", shard, aggregate)
    readAll(fake) shouldBe Seq("plain" -> 0L, "sub0" -> 0L, "sub1" -> 1L, "sub2" -> 2L)
  }

  test("given misrouted sub-records, when KCL's filter is on, then only those inside the shard's range are kept") {
    val fake = new FakeKinesisClient()
    fake.createStream("s", 1)
    val inside = BigInt(10).toString
    val outside = BigInt(1000).toString
    fake.putRecordToShard(
      "s",
      shard,
      KplTestAggregates.aggregate(Seq(
        ("a", Some(inside), "in".getBytes(UTF_8)),
        ("b", Some(outside), "out".getBytes(UTF_8)))))
    val range = Some(HashKeyRange(0, 100))
    readAll(fake, range = range).map(_._1) shouldBe Seq("in", "out")
    readAll(fake, range = range, s = settings(dropMisrouted = true)).map(_._1) shouldBe Seq("in")
  }

  test("given a record limit, when read, then the batch ends exactly at the limit, records that end and more to come") {
    val (fake, expected) = oneShard(30)
    val store = newStore()
    readAll(fake, s = settings(maxRecords = 10, perFetch = 4), store = store).map(_._1) shouldBe expected.take(10)
    val end = store.get(0L, 0).get.ends.head
    end.recordCount shouldBe 10
    end.stats.map(_.moreAvailable) shouldBe Some(true)
  }

  test("given records still arriving, when read, then the task stops past the records that were there at its start") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    (1 to 5).foreach(i => fake.putRecordToShard("s", shard, s"old$i".getBytes(UTF_8)))
    clock.advance(10)
    val reader = new TaskReader(
      TaskPartition(0L, 0, Seq(TaskShard("s", shard, 0L, TrimHorizon, None))),
      settings(perFetch = 3),
      newStore(),
      fake,
      clock)
    (1 to 5).foreach(i => fake.putRecordToShard("s", shard, s"new$i".getBytes(UTF_8)))
    val out = mutable.Buffer.empty[String]
    while (reader.next()) out += new String(reader.get().getBinary(0), UTF_8)
    out shouldBe Seq("old1", "old2", "old3", "old4", "old5", "new1")
  }
}
