package io.github.sparkkinesis.source.reading

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.UUID

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.metrics.{MetricNames, ReadMetrics}
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon

/**
 * A polling task's reader against calls that fail for a passing reason (an endpoint restarting, a network outage): it
 * retries them for at most `kinesis.driverRetryTimeout` in a row, on the fake client's clock.
 */
class PassingFailuresSuite extends AnyFunSuite with Matchers {

  private val shard = "shardId-000000000000"

  private final class Setup(records: Int, query: String = MetricNames.BatchQuery) {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    val expected: Seq[String] =
      (1 to records).map { i => fake.putRecordToShard("s", shard, s"r$i".getBytes(UTF_8)); s"r$i" }
    val store = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())
    val settings: ReaderSettings = ReaderSettings(
      ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
      10000,
      0L,
      100000L,
      maxTimePerShardMs = 10 * 60 * 1000L,
      retryBaseMs = 100L,
      retryMaxMs = 1000L,
      dropMisroutedRecords = false,
      failureTimeoutMs = 30000L,
      query = query)

    /** One task of batch 0, its waits moving the fake's clock: the values it read. */
    def read(): Seq[String] = {
      val reader = new TaskReader(
        TaskPartition(0L, 0, Seq(TaskShard("s", shard, 0L, TrimHorizon, None))),
        settings,
        store,
        fake,
        clock,
        ms => clock.advance(ms))
      val out = mutable.Buffer.empty[String]
      try while (reader.next()) out += new String(reader.get().getBinary(0), UTF_8)
      finally reader.close()
      out.toVector
    }
  }

  private def refused = new UnreachableException("Cannot reach Kinesis: Connection refused (injected)")

  test("given refused connections on GetShardIterator for a few seconds, when a task reads, then it goes on and " +
    "reads every record once") {
    val t = new Setup(20)
    t.fake.failNextCalls("GetShardIterator", 12)(refused)
    val started = t.clock()
    t.read() shouldBe t.expected
    t.fake.shardIteratorCalls shouldBe 13
    (t.clock() - started) should be < t.settings.failureTimeoutMs
  }

  test("given 3 empty pages ahead, a throttled call and 2 reset connections, when a task reads and another attempt " +
    "reads the batch again, then the readers' metrics count both attempts' records, calls, throttles, retries and " +
    "empty pages") {
    val t = new Setup(20, query = s"reader-metrics-${UUID.randomUUID()}")
    t.fake.emptyPagesAhead("s", shard, 3)
    t.fake.throttleNextGetRecords(1)
    t.fake.failNextCalls("GetRecords", 2)(new KinesisClientException("Kinesis GetRecords failed: Connection reset"))
    t.read() shouldBe t.expected
    t.read() shouldBe t.expected
    val metrics = ReadMetrics.of(t.settings.query, "s")
    metrics.recordsRead.getCount shouldBe 40
    metrics.bytesRead.getCount shouldBe 2 * t.expected.map(_.length).sum
    metrics.getRecordsCalls.getCount shouldBe t.fake.getRecordsCalls
    metrics.throttledCalls.getCount shouldBe 1
    metrics.retries.getCount shouldBe 2
    metrics.emptyPages.getCount shouldBe 6 // each attempt's iterator meets the 3 empty pages
    metrics.subscribeToShardCalls.getCount shouldBe 0
  }

  test("given GetRecords failing with reset connections and server errors mid-read, when a task reads, then it " +
    "renews its iterator and loses nothing") {
    val t = new Setup(30)
    t.fake.failNextCalls("GetRecords", 3)(new KinesisClientException("Kinesis GetRecords failed: Connection reset"))
    t.read() shouldBe t.expected
  }

  test("given an endpoint that refuses connections for longer than kinesis.driverRetryTimeout, when a task reads, " +
    "then it fails after that long, naming the shard, the option and the cause") {
    val t = new Setup(5)
    t.fake.failNextCalls("GetShardIterator", Int.MaxValue)(refused)
    val started = t.clock()
    val e = intercept[IllegalStateException](t.read())
    e.getMessage should (include("shard shardId-000000000000 of stream s") and include("kinesis.driverRetryTimeout")
      and include("Connection refused"))
    (t.clock() - started) should be >= t.settings.failureTimeoutMs
    (t.clock() - started) should be < t.settings.failureTimeoutMs + t.settings.retryMaxMs * 2
  }

  test("given refused credentials, when a task reads, then it fails at once without retrying") {
    val t = new Setup(5)
    t.fake.failNextCalls("GetShardIterator", 5)(new AccessException("AccessDenied (injected)"))
    intercept[AccessException](t.read())
    t.fake.shardIteratorCalls shouldBe 1
  }
}
