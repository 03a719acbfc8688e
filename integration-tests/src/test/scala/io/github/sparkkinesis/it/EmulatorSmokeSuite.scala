package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.Arrays

import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * Proves the harness itself, without the connector: the emulator starts, TestStreams creates, fills and reshapes
 * streams, the awslabs aggregator writes real KPL aggregates, and Eventually and SparkHarness behave.
 */
class EmulatorSmokeSuite extends AnyFunSuite with Matchers {

  test("a new stream is ACTIVE with the requested number of open shards") {
    // When
    val stream = TestStreams.createStream("it-smoke-create", shards = 3)
    // Then
    TestStreams.status(stream).toString shouldBe "ACTIVE"
    TestStreams.openShards(stream).map(_.shardId()) shouldBe
      Seq("shardId-000000000000", "shardId-000000000001", "shardId-000000000002")
  }

  test("records are stored where PutRecords says, and GetRecords reads them back unchanged") {
    // Given
    val stream = TestStreams.createStream("it-smoke-put", shards = 2)
    val input = TestStreams.testRecords("put", n = 700, keys = 20) // more than one PutRecords call of 500
    // When
    val puts = TestStreams.putStrings(stream, input)
    val stored = TestStreams.readStream(stream)
    // Then
    puts.map(p => (p.partitionKey, p.payload)) shouldBe input
    puts.map(_.shardId).distinct.size shouldBe 2
    val read = stored.map { case (shard, r) => (shard, r.sequenceNumber(), r.partitionKey(), r.data().asUtf8String()) }
    read should contain theSameElementsAs puts.map(p => (p.shardId, p.sequenceNumber, p.partitionKey, p.payload))
  }

  test("splitting a shard closes it and opens two children that share its hash key range") {
    // Given
    val stream = TestStreams.createStream("it-smoke-split", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 50, keys = 10))
    // When
    val children = TestStreams.splitShard(stream, "shardId-000000000000")
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", n = 50, keys = 10))
    // Then
    val byId = TestStreams.listShards(stream).map(s => s.shardId() -> s).toMap
    val parent = byId("shardId-000000000000")
    parent.sequenceNumberRange().endingSequenceNumber() should not be null
    children.map(c => byId(c).parentShardId()) shouldBe Seq(parent.shardId(), parent.shardId())
    val ranges = children.map(c => byId(c).hashKeyRange()).sortBy(r => BigInt(r.startingHashKey()))
    ranges.head.startingHashKey() shouldBe parent.hashKeyRange().startingHashKey()
    ranges.last.endingHashKey() shouldBe parent.hashKeyRange().endingHashKey()
    BigInt(ranges.head.endingHashKey()) + 1 shouldBe BigInt(ranges.last.startingHashKey())
    after.map(_.shardId).toSet should not contain parent.shardId()
    before.map(_.shardId).toSet should contain(parent.shardId())
    RecordChecks.depths(byId.values.toSeq) shouldBe
      Map(parent.shardId() -> 0, "shardId-000000000001" -> 0, children.head -> 1, children.last -> 1)
  }

  test("merging adjacent shards and UpdateShardCount reshape the stream") {
    // Given
    val stream = TestStreams.createStream("it-smoke-merge", shards = 2)
    // When
    val (a, b) = TestStreams.adjacentOpenShards(stream)
    val merged = TestStreams.mergeShards(stream, a, b)
    // Then
    TestStreams.openShards(stream).map(_.shardId()) shouldBe Seq(merged)
    // When: Kinesis allows at most doubling the shard count in one UpdateShardCount
    val scaled = TestStreams.updateShardCount(stream, target = 2)
    // Then
    scaled.size shouldBe 2
    TestStreams.putStrings(stream, TestStreams.testRecords("scaled", n = 100, keys = 50)).map(_.shardId).toSet
      .subsetOf(scaled.map(_.shardId()).toSet) shouldBe true
  }

  test("putAggregated stores KPL aggregates: magic bytes, a protobuf body with the user records, an MD5 trailer") {
    // Given: enough user records, some large, for more than one 1 MB aggregate
    val stream = TestStreams.createStream("it-smoke-agg", shards = 2)
    val users = (0 until 1200).map { i =>
      val size = if (i % 100 == 0) 100000 else 40
      (s"user-${i % 37}", (s"agg-$i-" + "x" * size).getBytes(UTF_8))
    }
    // When
    val aggregates = TestStreams.putAggregated(stream, users)
    val stored = TestStreams.readStream(stream).map { case (shard, r) => (shard, r.sequenceNumber()) -> r }.toMap
    // Then
    aggregates.size should be > 1
    aggregates.flatMap(_.userRecords).map { case (k, d) => (k, new String(d, UTF_8)) } shouldBe
      users.map { case (k, d) => (k, new String(d, UTF_8)) }
    aggregates.foreach { agg =>
      val bytes = stored((agg.shardId, agg.sequenceNumber)).data().asByteArray()
      val magic = KplAggregates.MagicBytes.length
      Arrays.copyOfRange(bytes, 0, magic) shouldBe KplAggregates.MagicBytes
      val body = Arrays.copyOfRange(bytes, magic, bytes.length - 16)
      MessageDigest.getInstance("MD5").digest(body) shouldBe Arrays.copyOfRange(bytes, bytes.length - 16, bytes.length)
      // The protobuf body holds every user record's key and data (parsing it is the connector's job, tested in
      // AggregationSuite; KCL 1's generated parser does not run on every Spark line's protobuf runtime).
      val text = new String(body, java.nio.charset.StandardCharsets.ISO_8859_1)
      agg.userRecords.foreach { case (k, d) =>
        text should include(k)
        text should include(new String(d, java.nio.charset.StandardCharsets.ISO_8859_1))
      }
    }
  }

  test("Eventually.await fails within its bound, naming what it waited for and what it saw") {
    // When
    val started = System.nanoTime()
    val error = intercept[AssertionError] {
      Eventually.await("the impossible", 300.millis, "saw only the possible")(condition = false)
    }
    // Then
    (System.nanoTime() - started).nanos should be < 5.seconds
    error.getMessage should include("the impossible")
    error.getMessage should include("saw only the possible")
  }

  test("the Spark harness runs a local session with the connector assembly on the classpath") {
    // Given
    val assembly =
      new java.io.File(sys.props.getOrElse("sparkkinesis.assemblyJar", fail("sparkkinesis.assemblyJar not set")))
    // Then
    assembly.isFile shouldBe true
    System.getProperty("java.class.path") should include(assembly.getName)
    SparkHarness.session.range(10).count() shouldBe 10
    SparkHarness.session.conf.get("spark.sql.shuffle.partitions") shouldBe "2"
  }
}
