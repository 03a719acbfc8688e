package io.github.sparkkinesis.it

import java.time.Instant
import java.time.format.DateTimeFormatter

import scala.concurrent.duration._

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** Where a new query starts reading: each form of `kinesis.startingPosition`, checked on exact sets of records. */
class StartingPositionSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite with JsonStartingPositions {

  private val ExpectedSchema = StructType(Seq(
    StructField("data", BinaryType),
    StructField("streamName", StringType),
    StructField("partitionKey", StringType),
    StructField("sequenceNumber", StringType),
    StructField("approximateArrivalTimestamp", TimestampType),
    StructField("shardId", StringType),
    StructField("subSequenceNumber", LongType),
    StructField("stream", StringType)))

  test("TRIM_HORIZON reads the records put before and after the start, once each, in the documented columns") {
    // Given
    val stream = TestStreams.createStream("it-start-trim", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 150, keys = 10))
    // When
    val df = readKinesis(stream, "TRIM_HORIZON")
    val (query, sink) = startCollecting(df)
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", n = 150, keys = 10))
    // Then
    df.schema.map(f => (f.name, f.dataType)) shouldBe ExpectedSchema.map(f => (f.name, f.dataType))
    assertReadsExactly(query, sink, before ++ after)
    val where = (before ++ after).map(p => p.payload -> (stream, p.partitionKey, p.shardId, p.sequenceNumber, 0L)).toMap
    sink.records.map(r => r.payload -> (r.streamName, r.partitionKey, r.shardId, r.sequenceNumber, r.subSequenceNumber))
      .toMap shouldBe where
  }

  test("EARLIEST reads from the oldest retained record, like TRIM_HORIZON") {
    // Given
    val stream = TestStreams.createStream("it-start-earliest", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 100, keys = 10))
    // When
    val (query, sink) = startCollecting(readKinesis(stream, "EARLIEST"))
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", n = 100, keys = 10))
    // Then
    assertReadsExactly(query, sink, before ++ after)
  }

  test("LATEST skips the records put before the query started and reads those put after") {
    // Given
    val stream = TestStreams.createStream("it-start-latest", shards = 2)
    TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 100, keys = 10))
    // When: the query has resolved its start (processAllAvailable returns after the first trigger)
    val (query, sink) = startCollecting(readKinesis(stream, "LATEST"))
    query.processAllAvailable()
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", n = 100, keys = 10))
    // Then
    assertReadsExactly(query, sink, after)
  }

  test("AT_TIMESTAMP reads the records that arrived at or after the instant, and none before") {
    // Given: records before the instant, the instant (a whole second after them), records after it
    val stream = TestStreams.createStream("it-start-timestamp", shards = 2)
    TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 100, keys = 10))
    val lastBefore = TestStreams.readStream(stream).map(_._2.approximateArrivalTimestamp()).maxBy(_.toEpochMilli)
    val instant = Instant.ofEpochSecond(lastBefore.getEpochSecond + 1)
    Eventually.await(s"the clock to pass $instant", 5.seconds) {
      System.currentTimeMillis() > instant.toEpochMilli
    }
    val atOrAfter = TestStreams.putStrings(stream, TestStreams.testRecords("at-or-after", n = 100, keys = 10))
    val arrivals = TestStreams.readStream(stream).map { case (_, r) =>
      r.data().asUtf8String() -> r.approximateArrivalTimestamp()
    }
    all(arrivals.filter(_._1.startsWith("at-or-after")).map(_._2.toEpochMilli)) should be >= instant.toEpochMilli
    // When
    val (query, sink) =
      startCollecting(readKinesis(stream, "AT_TIMESTAMP " + DateTimeFormatter.ISO_INSTANT.format(instant)))
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", n = 100, keys = 10))
    // Then
    assertReadsExactly(query, sink, atOrAfter ++ after)
  }

  test(
    "a JSON map starts each named shard AT or AFTER a sequence number, or at LATEST; unnamed shards at TRIM_HORIZON") {
    checkJsonStartingPositions("it-start-json")
  }
}
