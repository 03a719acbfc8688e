package io.github.sparkkinesis.source.reading

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.metrics.ReadMetrics
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon

/**
 * What a polling task's reader counts in its JVM's metrics of the query and stream, on the fake client: records, bytes,
 * GetRecords calls, throttled calls, retries and empty pages walked, again for an attempt that reads again.
 */
class ReaderMetricsSuite extends AnyFunSuite with Matchers {

  private val shard = "shardId-000000000000"

  test("Given a shard behind 3 empty pages, a throttled call and 2 reset connections, when a task reads it twice " +
    "(a retried attempt), then the readers' metrics count both attempts' records, calls, throttles, retries and " +
    "empty pages") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    val data = (1 to 20).map(i => s"record-$i")
    data.foreach(d => fake.putRecordToShard("s", shard, d.getBytes(UTF_8)))
    val query = s"reader-metrics-${UUID.randomUUID()}"
    val settings = ReaderSettings(
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
    val store = new HadoopShardEndStore(Files.createTempDirectory("ends").toString, new Configuration())
    def read(): Long = {
      val reader = new TaskReader(
        TaskPartition(0L, 0, Seq(TaskShard("s", shard, 0L, TrimHorizon, None))),
        settings,
        store,
        fake,
        clock,
        ms => clock.advance(ms))
      try while (reader.next()) ()
      finally reader.close()
      reader.currentMetricsValues().find(_.name() == "getRecordsCalls").get.value()
    }
    // Given
    fake.emptyPagesAhead("s", shard, 3)
    fake.throttleNextGetRecords(1)
    fake.failNextCalls("GetRecords", 2)(new KinesisClientException("Kinesis GetRecords failed: Connection reset"))
    // When the first attempt reads, and another attempt reads the same batch again
    val firstCalls = read()
    val secondCalls = read()
    // Then
    val metrics = ReadMetrics.of(query, "s")
    metrics.recordsRead.getCount shouldBe 40
    metrics.bytesRead.getCount shouldBe 2 * data.map(_.length).sum
    metrics.getRecordsCalls.getCount shouldBe firstCalls + secondCalls
    metrics.throttledCalls.getCount shouldBe 1
    metrics.retries.getCount shouldBe 2
    metrics.emptyPages.getCount shouldBe 6 // each attempt's iterator walks the 3 empty pages
    metrics.subscribeToShardCalls.getCount shouldBe 0
  }
}
