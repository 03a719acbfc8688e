package io.github.sparkkinesis.offsets

import scala.io.Source

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.metadata.{ReadStats, ShardEndRecord, TaskEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition._

/** Persisted formats stay readable: stored samples of every version are read back exactly. */
class PersistedFormatsSuite extends AnyFunSuite with Matchers {

  private def sample(name: String): String = {
    val source = Source.fromInputStream(getClass.getResourceAsStream(s"/formats/$name"), "UTF-8")
    try source.mkString.trim
    finally source.close()
  }

  private val seq = "49590338271490256608559692538361571095921575989136588818"

  private val offset = KinesisSourceOffset(
    7L,
    Map("orders" -> Map(
      "shardId-000000000000" -> ShardState(ShardEnd, Nil),
      "shardId-000000000001" -> ShardState(AfterSequenceNumber(seq), Seq("shardId-000000000000")),
      "shardId-000000000002" -> ShardState(AtTimestamp(1714564800000L), Nil),
      "shardId-000000000003" -> ShardState(TrimHorizon, Nil),
      "shardId-000000000004" ->
        ShardState(AtSequenceNumber("49590338271490256608559692538361571095921575989136588819"), Nil))))

  test("given a stored version-1 offset, when read, then every shard state comes back") {
    KinesisSourceOffset.fromJson(sample("offset-v1.json")) shouldBe offset
  }

  test("given an offset, when written, then the JSON is the stored sample byte for byte (sorted keys)") {
    offset.json() shouldBe sample("offset-v1.json")
  }

  test("given offsets built in different orders, when written, then their JSON is equal, so Spark sees them equal") {
    val reversed = KinesisSourceOffset(7L, Map("orders" -> offset.streams("orders").toSeq.reverse.toMap))
    reversed.json() shouldBe offset.json()
    reversed shouldBe offset
  }

  test("given a stored version-1 shard end record, when read, then it comes back") {
    ShardEndRecord.fromJson(sample("shard-end-v1.json"), "sample") shouldBe
      ShardEndRecord("orders", "shardId-000000000001", 7L, AfterSequenceNumber(seq), ShardEnd, 42L)
    ShardEndRecord.fromJson(sample("shard-end-v1.json"), "sample").toJson shouldBe sample("shard-end-v1.json")
  }

  private val offsetV2 = offset.copy(reads = Some(Map("orders" -> Map(
    "shardId-000000000001" -> ShardRead(Some(500L), Some(1714564800000L)),
    "shardId-000000000003" -> ShardRead(None, None)))))

  test("given a stored version-2 offset, when read, then the shards it reads and their bounds come back") {
    KinesisSourceOffset.fromJson(sample("offset-v2.json")) shouldBe offsetV2
    offsetV2.json() shouldBe sample("offset-v2.json")
    offsetV2.shardsRead("orders") shouldBe Seq(
      "shardId-000000000001" -> ShardRead(Some(500L), Some(1714564800000L)),
      "shardId-000000000003" -> ShardRead.Unbounded)
  }

  test("given a stored version-2 shard end record, when read, then what its reader saw comes back") {
    val record = ShardEndRecord(
      "orders",
      "shardId-000000000001",
      7L,
      AfterSequenceNumber(seq),
      AfterSequenceNumber(seq),
      0L,
      Some(ReadStats(
        1500L,
        moreAvailable = true,
        boundReached = false,
        Some(1714564800000L),
        bytes = 0L,
        getRecordsCalls = 3L,
        throttledCalls = 1L)))
    ShardEndRecord.fromJson(sample("shard-end-v2.json"), "sample") shouldBe record
    record.toJson shouldBe sample("shard-end-v2.json")
  }

  private val offsetV3 = KinesisSourceOffset(
    7L,
    Map(
      "orders" -> offset.streams("orders"),
      "arn:aws:kinesis:us-east-1:123456789012:stream/clicks" -> Map(
        "shardId-000000000000" -> ShardState(AfterSequenceNumber(seq), Nil))),
    Some(Map(
      "orders" -> Map(
        "shardId-000000000001" -> ShardRead(Some(500L), Some(1714564800000L), Some(0)),
        "shardId-000000000003" -> ShardRead(None, None, Some(1))),
      "arn:aws:kinesis:us-east-1:123456789012:stream/clicks" -> Map(
        "shardId-000000000000" -> ShardRead(None, None, Some(0))))))

  test("given a stored version-3 offset, when read, then its streams, reads and tasks come back") {
    KinesisSourceOffset.fromJson(sample("offset-v3.json")) shouldBe offsetV3
    offsetV3.json() shouldBe sample("offset-v3.json")
    offsetV3.isLegacy shouldBe false
    offsetV3.plannedReads.map(r => (r.stream.takeRight(6), r.shardId.takeRight(1), r.task)) shouldBe Seq(
      ("clicks", "0", 0),
      ("orders", "1", 0),
      ("orders", "3", 1))
  }

  test("given a version-2 offset, when its reads are planned, then each shard has a task of its own") {
    offsetV2.isLegacy shouldBe true
    offsetV2.plannedReads.map(r => r.shardId.takeRight(1) -> r.task) shouldBe Seq("1" -> 0, "3" -> 1)
  }

  test("given a stored version-1 task end record, when read, then the ends of its shards come back") {
    val record = TaskEndRecord(
      7L,
      3,
      Seq(
        ShardEndRecord(
          "orders",
          "shardId-000000000001",
          7L,
          AfterSequenceNumber(seq),
          ShardEnd,
          42L,
          Some(ReadStats(
            0L,
            moreAvailable = false,
            boundReached = false,
            Some(1714564800000L),
            bytes = 420L,
            getRecordsCalls = 2L,
            throttledCalls = 0L))),
        ShardEndRecord(
          "orders",
          "shardId-000000000003",
          7L,
          TrimHorizon,
          TrimHorizon,
          0L,
          Some(ReadStats(
            0L,
            moreAvailable = false,
            boundReached = false,
            None,
            bytes = 0L,
            getRecordsCalls = 1L,
            throttledCalls = 0L)))))
    TaskEndRecord.fromJson(sample("task-end-v1.json"), "sample") shouldBe record
    record.toJson shouldBe sample("task-end-v1.json")
  }

  private val offsetV4 = KinesisSourceOffset(
    8L,
    Map("orders" -> Map(
      "shardId-000000000000" -> ShardState(AfterSubSequenceNumber(seq, 2L), Nil),
      "shardId-000000000001" -> ShardState(AfterSequenceNumber(seq), Nil))),
    Some(Map.empty))

  test("given a stored version-4 offset, when read, then a position inside a KPL aggregate comes back") {
    KinesisSourceOffset.fromJson(sample("offset-v4.json")) shouldBe offsetV4
    offsetV4.json() shouldBe sample("offset-v4.json")
    offsetV4.streams("orders")("shardId-000000000000").position.iteratorStart shouldBe
      Some(io.github.sparkkinesis.client.IteratorStart.AtSequenceNumber(seq))
  }

  test("given a real-time offset with no position inside an aggregate, when written, then it is version 2 as before") {
    val whole = offsetV4.copy(streams = Map("orders" -> Map("shardId-000000000001" -> ShardState(TrimHorizon, Nil))))
    Json.read(whole.json(), "test").get("version").asInt() shouldBe 2
  }

  test("given an offset inside an aggregate, when a release that reads versions up to 3 reads it, then it refuses it " +
    "and says a newer spark-kinesis wrote it") {
    val error = intercept[IllegalStateException](Json.checkVersion(Json.read(offsetV4.json(), "test"), 3, "the offset"))
    error.getMessage should include("format version 4 is not supported")
    error.getMessage should include("newer spark-kinesis")
  }

  test("given a stored version-2 task end record, when read, then the plan that wrote it comes back") {
    val record = TaskEndRecord(
      7L,
      1000001,
      Seq(ShardEndRecord("orders", "shardId-000000000001", 7L, AfterSubSequenceNumber(seq, 2L), ShardEnd, 0L)),
      Some("7c9e6679-7425-40de-944b-e07fc1f90ae7"))
    TaskEndRecord.fromJson(sample("task-end-v2.json"), "sample") shouldBe record
    record.toJson shouldBe sample("task-end-v2.json")
  }

  test("given an offset from a newer connector, when read, then the message says to use a newer version") {
    val newer = sample("offset-v1.json").replace("\"version\":1", "\"version\":5")
    intercept[IllegalStateException](KinesisSourceOffset.fromJson(newer)).getMessage should include(
      "newer spark-kinesis")
  }

  test("given a damaged offset, when read, then the message says what is wrong") {
    intercept[IllegalArgumentException](KinesisSourceOffset.fromJson("{\"version\":1}")).getMessage should
      include("field 'streams' is missing")
    intercept[IllegalArgumentException](KinesisSourceOffset.fromJson("{oops")).getMessage should include(
      "not valid JSON")
  }

  test("given readable shards, then a child waits until every tracked parent is finished") {
    offset.shardsRead("orders").map(_._1) shouldBe
      Seq("shardId-000000000001", "shardId-000000000002", "shardId-000000000003", "shardId-000000000004")
    val parentOpen = offset.copy(streams = Map("orders" -> (offset.streams("orders") +
      ("shardId-000000000000" -> ShardState(TrimHorizon, Nil)))))
    parentOpen.shardsRead("orders").map(_._1) should not contain "shardId-000000000001"
  }

  test("given sequence numbers of different lengths, then they are compared as numbers") {
    compareSequenceNumbers("9", "10") should be < 0
    compareSequenceNumbers(seq, seq) shouldBe 0
  }

  test("given digit strings with and without leading zeros, of equal and different lengths, then they compare as " +
    "their numbers do, and a string that is no number fails as BigInteger fails") {
    val random = new scala.util.Random(37)
    def number(): String = {
      val digits = Seq.fill(1 + random.nextInt(40))(('0' + random.nextInt(10)).toChar).mkString
      if (random.nextBoolean()) digits else "0" * random.nextInt(3) + digits
    }
    val edges = Seq("0", "00", "1", "01", "9", "10", seq, seq.dropRight(1) + "9", "0" + seq, "5" * 39, "49" + "0" * 54)
    val numbers = edges ++ Seq.fill(300)(number()) ++ Seq.fill(50)(seq.take(40) + number().takeRight(16))
    for (a <- numbers; b <- numbers) {
      withClue(s"$a vs $b: ") {
        math.signum(compareSequenceNumbers(a, b)) shouldBe new java.math.BigInteger(a).compareTo(
          new java.math.BigInteger(b))
      }
    }
    a[NumberFormatException] should be thrownBy compareSequenceNumbers("12a", "3")
    a[NumberFormatException] should be thrownBy compareSequenceNumbers("", "3")
  }
}
