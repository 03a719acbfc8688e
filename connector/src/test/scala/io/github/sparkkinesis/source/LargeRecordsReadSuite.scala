package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.aggregation.KplTestAggregates
import io.github.sparkkinesis.client.{FakeKinesisClient, IteratorStart, ManualClock}
import io.github.sparkkinesis.source.reading.{ParallelRows, SubscriptionCache}

/** Records of up to 10 MiB (streams raised with UpdateMaxRecordSize) through every way the source reads. */
class LargeRecordsReadSuite extends AnyFunSuite with Matchers with BeforeAndAfterEach {
  private val MiB = 1024 * 1024

  override def afterEach(): Unit = SubscriptionCache.shared.evict(0L)

  /** `n` bytes: a label, then filler, so rows compare by label and length without printing megabytes. */
  private def payload(label: String, n: Int): Array[Byte] = {
    val bytes = Array.fill(n)('.'.toByte)
    label.getBytes(UTF_8).copyToArray(bytes)
    bytes
  }

  private def summary(data: String): (String, Int) = (data.takeWhile(_ != '.'), data.length)

  /**
   * Three shards, each with a 10 MiB record (partition key included) between small ones, and on the first shard a KPL
   * aggregate holding a 9 MiB user record and a small one; what a reader must return, per shard in order.
   */
  private def bigStream(fake: FakeKinesisClient): Map[String, Seq[(String, Int)]] = {
    val shards = fake.createStream("s", 3)
    fake.updateMaxRecordSize("s", 10240)
    shards.zipWithIndex.map { case (shard, i) =>
      fake.putRecordToShard("s", shard, payload(s"small-$i-a", 100), "pk")
      fake.putRecordToShard("s", shard, payload(s"big-$i", 10 * MiB - 2), "pk")
      fake.putRecordToShard("s", shard, payload(s"small-$i-b", 100), "pk")
      val aggregated = if (i == 0) {
        val user = Seq(("u", None, payload("agg-big", 9 * MiB)), ("u", None, payload("agg-small", 10)))
        fake.putRecordToShard("s", shard, KplTestAggregates.aggregate(user), "pk")
        Seq(("agg-big", 9 * MiB), ("agg-small", 10))
      } else Nil
      shard -> (Seq((s"small-$i-a", 100), (s"big-$i", 10 * MiB - 2), (s"small-$i-b", 100)) ++ aggregated)
    }.toMap
  }

  private def readAll(options: Map[String, String]): Unit = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val expected = bigStream(fake)
    // one task reads the three shards at once, through ParallelRows
    val driver = new MicroBatchDriver(
      fake,
      options ++ Map("kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.shardsPerTask" -> "3"),
      clock = clock,
      parallelism = 1)
    val rows = driver.drain()
    rows.groupBy(_.shardId).map { case (shard, out) => shard -> out.map(o => summary(o.data)) } shouldBe expected
    driver.stream.stop()
  }

  test("given 10 MiB records and a 9 MiB record in a KPL aggregate on three shards, when one task polls them, " +
    "then every record comes once, whole, in shard order") {
    readAll(Map.empty)
  }

  test("given 10 MiB records and a 9 MiB record in a KPL aggregate on three shards, when one task reads them " +
    "through subscriptions, then every record comes once, whole, in shard order") {
    readAll(Map("kinesis.consumerType" -> "EFO", "kinesis.consumerName" -> "q"))
  }

  test("given a GetRecords page limit, when a shard holds three 10 MiB records, then each page holds one") {
    val fake = new FakeKinesisClient(new ManualClock())
    val Seq(shard) = fake.createStream("s", 1)
    fake.updateMaxRecordSize("s", 10240)
    (1 to 3).foreach(i => fake.putRecordToShard("s", shard, payload(s"big-$i", 10 * MiB - 2), "pk"))
    val first = fake.getRecords("s", fake.shardIterator("s", shard, IteratorStart.TrimHorizon), 100)
    first.records.size shouldBe 1
    first.millisBehindLatest should be > 0L
  }

  /** `rows` rows of `bytes` bytes each, counting how many it has handed out. */
  private final class Reader(rows: Int, bytes: Int, label: String) extends PartitionReader[InternalRow] {
    private val data = payload(label, bytes) // one array for every row: the test holds 10 MiB, not hundreds
    @volatile var handedOut = 0
    override def next(): Boolean = {
      if (handedOut < rows) { handedOut += 1; true }
      else false
    }
    override def get(): InternalRow = new GenericInternalRow(Array[Any](data, handedOut))
    override def close(): Unit = ()
  }

  test("given four shards of 10 MiB rows and a task that has not yet taken any, when the readers run ahead, then " +
    "at most one 10 MiB row waits in the queue and one in each reader's hands, and every row arrives in order") {
    // Given four readers of six 10 MiB rows each, whose task has taken nothing yet
    val readers = (0 until 4).map(i => new Reader(6, 10 * MiB, s"r$i"))
    val rows = new ParallelRows(readers, "big-rows")
    try {
      // When every reader thread has run as far as it may and waits
      val deadline = System.nanoTime() + 10000000000L
      def threads =
        Thread.getAllStackTraces.keySet.toArray(Array.empty[Thread]).filter(_.getName == "kinesis-read big-rows")
      def allWaiting = threads.length == 4 && threads.forall(t =>
        t.getState == Thread.State.WAITING || t.getState == Thread.State.TIMED_WAITING)
      while (!allWaiting && System.nanoTime() < deadline) Thread.`yield`()
      withClue("the reader threads should all wait: ")(allWaiting shouldBe true)
      // Then the queue holds one 10 MiB row (its byte bound is 6 MiB, a single larger row goes alone), and each
      // reader at most the row it waits to hand over
      rows.peakQueuedBytes shouldBe 10L * MiB
      readers.map(_.handedOut).sum should be <= 5
      // And every row arrives, each reader's in order
      val seen = Iterator.continually(rows.next()).takeWhile(identity)
        .map(_ => (new String(rows.get().getBinary(0), 0, 2, UTF_8), rows.get().getInt(1))).toVector
      seen.groupBy(_._1).map { case (r, out) => r -> out.map(_._2) } shouldBe
        (0 until 4).map(i => s"r$i" -> (1 to 6)).toMap
      rows.peakQueuedBytes shouldBe 10L * MiB
    } finally rows.close()
  }

  test("given small rows, when they pass through ParallelRows, then chunks stay under 1 MiB and the queue under " +
    "its byte bound") {
    val readers = (0 until 3).map(i => new Reader(5000, 1000, s"r$i"))
    val rows = new ParallelRows(readers, "small-rows")
    try {
      Iterator.continually(rows.next()).takeWhile(identity).size shouldBe 15000
      rows.peakQueuedBytes should be <= 5L * MiB
    } finally rows.close()
  }
}
