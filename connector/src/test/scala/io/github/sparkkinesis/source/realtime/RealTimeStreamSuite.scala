package io.github.sparkkinesis.source.realtime

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.connector.read.streaming.Offset
import org.scalatest.concurrent.Eventually.eventually
import org.scalatest.concurrent.PatienceConfiguration.Timeout
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import org.scalatest.time.{Seconds, Span}

import io.github.sparkkinesis.aggregation.KplTestAggregates
import io.github.sparkkinesis.client.FakeKinesisClient
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSubSequenceNumber, ShardEnd}
import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.{KinesisMicroBatchStream, MicroBatchDriver}

/**
 * The stream in real-time mode, driven as Spark's engine drives it (plan from the last committed offset, run every task
 * for the batch's time, merge their offsets, commit), over the fake client on the wall clock; restarts are new stream
 * objects on the same checkpoint.
 */
class RealTimeStreamSuite extends AnyFunSuite with Matchers {

  private val wall: () => Long = () => System.currentTimeMillis()

  private final class Driver(val fake: FakeKinesisClient, extra: Map[String, String] = Map.empty) {
    val checkpoint: String = Files.createTempDirectory("rt-checkpoint").toString
    val options: KinesisSourceOptions = KinesisSourceOptions.parse(Map(
      "kinesis.streamName" -> "s",
      "kinesis.startingPosition" -> "TRIM_HORIZON",
      "kinesis.realTime.pollInterval" -> "50ms",
      "kinesis.describeShardInterval" -> "0",
      "kinesis.clientRetryInterval" -> "1",
      "kinesis.clientMaxRetryInterval" -> "2") ++ extra)
    val warm = new WarmShards() // this driver's executor: its readers go on across batches
    var stream: Stream = new Stream
    var committed: Offset = stream.initialOffset()

    final class Stream
        extends KinesisMicroBatchStream(options, checkpoint, new Configuration(), _ => fake, () => 2, wall) {
      def start(): Unit = startRealTime()
      def plan(from: Offset): Seq[RealTimePartition] = planRealTime(from).map(_.asInstanceOf[RealTimePartition])
      def merge(reports: Seq[RealTimeTaskOffset]): Offset = mergeRealTime(reports)
      def rows(p: RealTimePartition): RealTimeRows = new RealTimeRows(p, readerSettings, store, fake, wall, warm = warm)
    }

    stream.start()

    /** One real-time batch of `ms`: the values each task handed over. */
    def batch(ms: Long, during: () => Unit = () => ()): Seq[String] = {
      val readers = stream.plan(committed).map(stream.rows)
      val out = mutable.Buffer.empty[String]
      try {
        during()
        val end = wall() + ms
        // One thread here stands in for the tasks: each is asked in turn, never past the batch's end.
        while (wall() < end) readers.foreach { r =>
          while (r.next(math.min(20L, math.max(0L, end - wall())))) out += new String(r.get().getBinary(0), UTF_8)
        }
        val merged = stream.merge(readers.map(_.offset))
        stream.commit(merged)
        committed = merged
      } finally readers.foreach(_.close())
      out.toVector
    }

    /**
     * One real-time batch whose tasks hand over `n` rows in all and no more before its time is up (a slow sink), once
     * every task is `settled`: the values handed over.
     */
    def batchOf(n: Int, settled: RealTimeRows => Boolean = _ => true): Seq[String] = {
      val readers = stream.plan(committed).map(stream.rows)
      val out = mutable.Buffer.empty[String]
      try {
        val end = wall() + 5000L
        while (out.size < n && wall() < end) readers.foreach { r =>
          if (out.size < n && r.next(20L)) out += new String(r.get().getBinary(0), UTF_8)
        }
        eventually(Timeout(Span(5, Seconds)))(readers.forall(settled) shouldBe true)
        val merged = stream.merge(readers.map(_.offset))
        stream.commit(merged)
        committed = merged
      } finally readers.foreach(_.close())
      out.toVector
    }

    def restart(): Unit = {
      stream.stop()
      stream = new Stream
      committed = stream.deserializeOffset(committed.json())
      stream.start()
    }
  }

  private def put(fake: FakeKinesisClient, values: Seq[String]): Unit =
    values.foreach(v => fake.putRecord("s", v, v.getBytes(UTF_8)))

  test("given records put before, during and between batches and across a restart, when read in real time, then each " +
    "is handed over exactly once") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 3)
    val d = new Driver(fake)
    put(fake, (1 to 10).map(i => s"a$i"))
    val first = d.batch(600L, () => put(fake, (1 to 10).map(i => s"b$i")))
    put(fake, (1 to 10).map(i => s"c$i"))
    val second = d.batch(600L)
    d.restart()
    put(fake, (1 to 10).map(i => s"d$i"))
    val third = d.batch(600L)
    (first ++ second ++ third).sorted shouldBe Seq("a", "b", "c", "d").flatMap(p => (1 to 10).map(i => s"$p$i")).sorted
    KinesisSourceOffset.of(d.committed).batch shouldBe 2L
  }

  test("given a real-time offset, when the query goes on in micro-batches, then it reads only what came after") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 2)
    val d = new Driver(fake)
    put(fake, Seq("x1", "x2"))
    d.batch(500L).sorted shouldBe Seq("x1", "x2")
    put(fake, Seq("y1"))
    val micro = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), checkpoint = d.checkpoint)
    micro.committed = KinesisSourceOffset.of(d.committed)
    micro.drain().map(_.data) shouldBe Seq("y1")
  }

  test("given micro-batches first, when the query goes on in real time, then it starts where they ended") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 2)
    val d = new Driver(fake)
    val micro = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), checkpoint = d.checkpoint)
    put(fake, Seq("m1", "m2"))
    micro.drain().map(_.data).sorted shouldBe Seq("m1", "m2")
    d.committed = micro.committed
    d.restart()
    put(fake, Seq("r1"))
    d.batch(500L) shouldBe Seq("r1")
  }

  test("given a split during a real-time batch, when the batch ends, then the children are read in it and tracked") {
    val fake = new FakeKinesisClient(wall)
    val Seq(parent) = fake.createStream("s", 1)
    val d = new Driver(fake)
    put(fake, Seq("p1"))
    var children = ("", "")
    val read = d.batch(
      1500L,
      () => {
        Thread.sleep(200L)
        children = fake.splitShard("s", parent, BigInt(2).pow(127))
        put(fake, Seq("c1", "c2", "c3"))
      })
    read.head shouldBe "p1"
    read.sorted shouldBe Seq("c1", "c2", "c3", "p1")
    val shards = KinesisSourceOffset.of(d.committed).streams("s")
    shards(parent).position shouldBe ShardEnd
    shards(children._1).waitsFor shouldBe Seq(parent)
    put(fake, Seq("n1"))
    d.batch(400L) shouldBe Seq("n1")
  }

  test("FLINK-37627: given restarts just before a parent shard's end and just after its children were reached, when " +
    "read in real time, then every record of parent and children is handed over exactly once") {
    // Given a parent read up to its last record
    val fake = new FakeKinesisClient(wall)
    val Seq(parent) = fake.createStream("s", 1)
    val d = new Driver(fake)
    put(fake, Seq("p1", "p2"))
    val first = d.batch(500L)

    // When it splits while the query is down, and the query restarts again once the children were reached
    val (left, right) = fake.splitShard("s", parent, BigInt(2).pow(127))
    val children = Seq("c1", "c2", "c3", "c4", "c5", "c6")
    put(fake, children)
    d.restart()
    val second = d.batch(1500L)
    d.restart()
    put(fake, Seq("n1", "n2", "n3"))
    val third = d.batch(600L)

    // Then
    (first ++ second ++ third).sorted shouldBe (Seq("p1", "p2", "n1", "n2", "n3") ++ children).sorted
    val shards = KinesisSourceOffset.of(d.committed).streams("s")
    shards.keySet should contain allOf (left, right)
  }

  private def putAggregate(fake: FakeKinesisClient, shard: String, values: Seq[String]): String =
    fake.putRecordToShard("s", shard, KplTestAggregates.aggregate(values.map(v => ("pk", None, v.getBytes(UTF_8)))))

  /** A one-shard stream holding an aggregate of u1, u2 and u3, then record p: its shard and the aggregate's number. */
  private def aggregateThenRecord(fake: FakeKinesisClient): (String, String) = {
    val Seq(shard) = fake.createStream("s", 1)
    val seq = putAggregate(fake, shard, Seq("u1", "u2", "u3"))
    put(fake, Seq("p"))
    (shard, seq)
  }

  test(
    "given a KPL aggregate cut by a batch's end, when the next batch runs, after a restart too, then it hands over " +
      "only the aggregate's sub-records not handed over yet") {
    val fake = new FakeKinesisClient(wall)
    val (shard, seq) = aggregateThenRecord(fake)
    val d = new Driver(fake)
    d.batchOf(2) shouldBe Seq("u1", "u2")
    KinesisSourceOffset.of(d.committed).streams("s")(shard).position shouldBe AfterSubSequenceNumber(seq, 1L)
    putAggregate(fake, shard, Seq("v1", "v2"))
    d.batchOf(3) shouldBe Seq("u3", "p", "v1")
    d.restart()
    d.batch(500L) shouldBe Seq("v2")
  }

  test(
    "given a real-time offset inside a KPL aggregate, when the query goes on in micro-batches, then they read only " +
      "the rest of it") {
    val fake = new FakeKinesisClient(wall)
    aggregateThenRecord(fake)
    val d = new Driver(fake)
    d.batchOf(1) shouldBe Seq("u1")
    val micro = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), checkpoint = d.checkpoint)
    micro.committed = KinesisSourceOffset.of(d.committed)
    micro.drain().map(r => r.data -> r.subSequence) shouldBe Seq("u2" -> 1L, "u3" -> 2L, "p" -> 0L)
  }

  Seq(true -> "fails, saying what to do", false -> "goes on from the oldest retained record").foreach {
    case (failOnDataLoss, outcome) =>
      test(
        s"given a real-time batch that ended with records ahead, when retention trims past where it ended before a " +
          s"restart, then with kinesis.failOnDataLoss=$failOnDataLoss the restarted query $outcome") {
        val fake = new FakeKinesisClient(wall)
        val Seq(shard) = fake.createStream("s", 1)
        val d = new Driver(fake, Map("kinesis.failOnDataLoss" -> failOnDataLoss.toString))
        put(fake, (1 to 5).map(i => s"r$i"))
        d.batchOf(2, settled = _.offset.ends.forall(_.recordCount == 5)) shouldBe Seq("r1", "r2")
        fake.trimShard("s", shard, 5) // r3 to r5 expire unread while the query is stopped
        put(fake, Seq("r6"))
        d.restart()
        if (failOnDataLoss) {
          val error = intercept[IllegalStateException](d.batch(300L))
          error.getMessage should include("lies behind the trim horizon")
          error.getMessage should include("kinesis.failOnDataLoss=false")
        } else d.batch(500L) shouldBe Seq("r6")
      }
  }

  test("given kinesis.maxRecordsPerTrigger or kinesis.maxBytesPerTrigger, when real-time mode starts, then it is " +
    "refused with what to do") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 1)
    Seq("kinesis.maxRecordsPerTrigger", "kinesis.maxBytesPerTrigger").foreach { option =>
      val error = intercept[IllegalArgumentException](new Driver(fake, Map(option -> "10")))
      error.getMessage should include(s"Option $option (10) caps")
      error.getMessage should include("Remove the option")
    }
  }

  test("given a real-time batch, when its metrics are asked, then they come from where its tasks stopped") {
    val fake = new FakeKinesisClient(wall)
    fake.createStream("s", 2)
    val d = new Driver(fake)
    put(fake, (1 to 4).map(i => s"v$i"))
    d.batch(400L)
    val metrics = d.stream.metrics(java.util.Optional.of(d.committed))
    metrics.get("recordsRead") shouldBe "4"
    metrics.get("shardsRead") shouldBe "2"
    metrics.get("maxMsBehindLatest") shouldBe "0"
  }
}
