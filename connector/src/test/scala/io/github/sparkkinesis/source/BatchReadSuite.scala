package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.options.KinesisSourceOptions

/** Batch reads (spark.read): a bounded range from kinesis.startingPosition to kinesis.endingPosition. */
class BatchReadSuite extends AnyFunSuite with Matchers {

  private def fixture(shards: Int = 2): (FakeKinesisClient, ManualClock) = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", shards)
    (fake, clock)
  }

  private def put(fake: FakeKinesisClient, prefix: String, n: Int): Seq[String] =
    (1 to n).map { i => fake.putRecord("s", s"$prefix-$i", s"$prefix-$i".getBytes(UTF_8)); s"$prefix-$i" }

  private def batch(fake: FakeKinesisClient, clock: ManualClock, options: (String, String)*): KinesisBatch =
    new KinesisBatch(KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s") ++ options), _ => fake, () => 2, clock)

  /** Reads every task of the batch, as Spark does; each task as many times as `attempts`. */
  private def read(b: KinesisBatch, attempts: Int = 1): Seq[String] = {
    val factory = b.createReaderFactory()
    b.planInputPartitions().toSeq.flatMap { partition =>
      val runs = (1 to attempts).map { _ =>
        val reader = factory.createReader(partition)
        val rows = mutable.Buffer.empty[String]
        try while (reader.next()) rows += new String(reader.get().getBinary(0), UTF_8)
        finally reader.close()
        rows.sorted.toVector
      }
      runs.distinct should have size 1
      runs.head
    }
  }

  test("given no positions, when a batch read is planned, then it reads from the trim horizon to the records there " +
    "when planned, even if read later and more arrive, and a retried task reads the same") {
    val (fake, clock) = fixture()
    val before = put(fake, "before", 30)
    val b = batch(fake, clock)
    b.planInputPartitions()
    clock.advance(5)
    put(fake, "after", 10)
    read(b, attempts = 2) should contain theSameElementsAs before
  }

  test("given an AT_TIMESTAMP ending position, then the read holds the records that arrived before that instant") {
    val (fake, clock) = fixture()
    val early = put(fake, "early", 5)
    clock.advance(1000)
    val at = java.time.Instant.ofEpochMilli(clock()).toString
    put(fake, "late", 5)
    clock.advance(1000)
    read(batch(fake, clock, "kinesis.endingPosition" -> s"AT_TIMESTAMP $at")) should contain theSameElementsAs early
  }

  test("given a per-shard ending position, then AT_SEQUENCE_NUMBER ends before that record, AFTER_SEQUENCE_NUMBER " +
    "with it, and shards it does not name end at LATEST") {
    val (fake, clock) = fixture(shards = 3)
    val Seq(s0, s1, s2) = Seq(0, 1, 2).map(i => f"shardId-$i%012d")
    def fill(shard: String) = (1 to 5).map(i => fake.putRecordToShard("s", shard, s"$shard-$i".getBytes(UTF_8)))
    val (seq0, seq1) = (fill(s0), fill(s1))
    fill(s2)
    val ending = s"""{"$s0": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "${seq0(2)}"},
                    | "$s1": {"iteratorType": "AFTER_SEQUENCE_NUMBER", "iteratorPosition": "${seq1(2)}"}}""".stripMargin
    read(batch(fake, clock, "kinesis.endingPosition" -> ending)) should contain theSameElementsAs
      ((1 to 2).map(i => s"$s0-$i") ++ (1 to 3).map(i => s"$s1-$i") ++ (1 to 5).map(i => s"$s2-$i"))
  }

  test("given a resharded stream and a starting timestamp, then parents and children are read, each record once") {
    val (fake, clock) = fixture(shards = 1)
    val old = put(fake, "old", 3)
    clock.advance(1000)
    val from = java.time.Instant.ofEpochMilli(clock()).toString
    val first = put(fake, "first", 10)
    fake.splitShard("s", "shardId-000000000000", BigInt(2).pow(127))
    val second = put(fake, "second", 20)
    read(batch(fake, clock, "kinesis.startingPosition" -> s"AT_TIMESTAMP $from")) should contain theSameElementsAs
      (first ++ second)
    old should have size 3
  }

  test("given an ending position naming an unknown shard, then the message names it and lists the stream's shards") {
    val (fake, clock) = fixture()
    val ending = """{"shardId-000000000009": {"iteratorType": "LATEST"}}"""
    intercept[IllegalArgumentException](batch(fake, clock, "kinesis.endingPosition" -> ending).planInputPartitions())
      .getMessage should (include("shardId-000000000009") and include("shardId-000000000001"))
  }

  test("given an ending instant in the future, when records arrive between two attempts of a task, then both read " +
    "the same records: no end lies after the planning instant") {
    val (fake, clock) = fixture(shards = 1)
    val early = put(fake, "early", 3)
    val future = java.time.Instant.ofEpochMilli(clock() + 60000).toString
    val b = batch(fake, clock, "kinesis.endingPosition" -> s"AT_TIMESTAMP $future")
    val factory = b.createReaderFactory()
    val partition = b.planInputPartitions().head
    def attempt(): Seq[String] = {
      val reader = factory.createReader(partition)
      try Iterator.continually(reader.next()).takeWhile(identity).map(_ => new String(reader.get().getBinary(0), UTF_8))
          .toVector
      finally reader.close()
    }
    val first = attempt()
    clock.advance(5)
    put(fake, "between", 3)
    attempt() shouldBe first
    first should contain theSameElementsAs early
  }
}
