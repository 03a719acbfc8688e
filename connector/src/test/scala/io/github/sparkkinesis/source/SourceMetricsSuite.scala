package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Optional

import scala.collection.JavaConverters._

import org.apache.spark.sql.connector.read.streaming.Offset
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}

/** The metrics a micro-batch reports in its progress, from what its tasks recorded. */
class SourceMetricsSuite extends AnyFunSuite with Matchers {

  test("given a batch that read two of three shards, one throttled once, then its metrics count what it read") {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val Seq(s0, s1, _) = fake.createStream("s", 3)
    (1 to 4).foreach(i => fake.putRecordToShard("s", s0, s"zero-$i".getBytes(UTF_8)))
    fake.putRecordToShard("s", s1, "one".getBytes(UTF_8))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    val end = driver.plan().get
    fake.throttleNextGetRecords(1)
    driver.read(end)
    driver.stream.commit(end)
    val metrics = driver.stream.metrics(Optional.of(end)).asScala
    metrics("shardsRead") shouldBe "2"
    metrics("shardsOpen") shouldBe "3"
    metrics("shardsClosed") shouldBe "0"
    metrics("recordsRead") shouldBe "5"
    metrics("bytesRead") shouldBe (4 * "zero-1".length + "one".length).toString
    metrics("throttledCalls") shouldBe "1"
    metrics("getRecordsCalls") shouldBe "3"
    metrics("driverGetRecordsCalls") shouldBe "3" // the driver checked each of the three shards once
    Seq("avgMsBehindLatest", "maxMsBehindLatest", "minMsBehindLatest").foreach(metrics(_) shouldBe "0")
  }

  test("given the offset as Spark's SerializedOffset (read back from the checkpoint after a restart), then the " +
    "metrics are those of its batch") {
    val fake = new FakeKinesisClient()
    fake.createStream("s", 1)
    fake.putRecord("s", "k", "v".getBytes(UTF_8))
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    driver.runBatch()
    driver.restart()
    val logged = driver.committed.json()
    val serialized = new Offset { override def json(): String = logged } // what Spark's SerializedOffset carries
    driver.stream.metrics(Optional.of(serialized)).asScala("recordsRead") shouldBe "1"
  }

  test("given no batch yet, then the metrics are empty") {
    val fake = new FakeKinesisClient()
    fake.createStream("s", 1)
    val driver = new MicroBatchDriver(fake, Map("kinesis.startingPosition" -> "TRIM_HORIZON"))
    driver.stream.metrics(Optional.empty()).asScala shouldBe empty
  }
}
