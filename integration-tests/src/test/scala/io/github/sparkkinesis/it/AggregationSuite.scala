package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * KPL aggregates (from the awslabs aggregator) among plain records: one row per user record, numbered within its
 * aggregate.
 */
class AggregationSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private def users(prefix: String, n: Int, keys: Int): Seq[(String, Array[Byte])] =
    TestStreams.testRecords(prefix, n, keys).map { case (k, v) => (k, v.getBytes(UTF_8)) }

  /** Where each user record must appear: (shardId, sequenceNumber, subSequenceNumber, partitionKey, payload). */
  private def expectedRows(
      plain: Seq[Put],
      aggregates: Seq[AggregatedPut]): Seq[(String, String, Long, String, String)] =
    plain.map(p => (p.shardId, p.sequenceNumber, 0L, p.partitionKey, p.payload)) ++
      aggregates.flatMap { agg =>
        agg.userRecords.zipWithIndex.map { case ((key, data), i) =>
          (agg.shardId, agg.sequenceNumber, i.toLong, key, new String(data, UTF_8))
        }
      }

  test("aggregated and plain records mixed: every user record once, sub-sequence numbers 0..n-1 per aggregate") {
    // Given: plain records, aggregates of many, of one and of large user records, more plain records
    val stream = TestStreams.createStream("it-aggregation", shards = 2)
    val plainBefore = TestStreams.putStrings(stream, TestStreams.testRecords("plain-before", n = 50, keys = 7))
    val manySmall = TestStreams.putAggregated(stream, users("agg-many", n = 300, keys = 13))
    val single = TestStreams.putAggregated(stream, users("agg-single", n = 1, keys = 1))
    val large = TestStreams.putAggregated(
      stream,
      (0 until 12).map(i => (s"big-$i", (s"agg-large-$i-" + "x" * 200000).getBytes(UTF_8))))
    val plainMiddle = TestStreams.putStrings(stream, TestStreams.testRecords("plain-middle", n = 50, keys = 7))
    large.size should be > 1 // the test's own precondition: 2.4 MB of user records fill more than one aggregate
    // When
    val (query, sink) = startCollecting(readKinesis(stream, "TRIM_HORIZON"))
    val aggAfter = TestStreams.putAggregated(stream, users("agg-after", n = 100, keys = 5))
    val plainAfter = TestStreams.putStrings(stream, TestStreams.testRecords("plain-after", n = 20, keys = 7))
    // Then
    val plain = plainBefore ++ plainMiddle ++ plainAfter
    val aggregates = manySmall ++ single ++ large ++ aggAfter
    val expected = expectedRows(plain, aggregates)
    sink.awaitRecords(query, expected.size)
    query.processAllAvailable()
    assert(sink.errors.isEmpty, sink.errors.mkString("; "))
    RecordChecks.assertExactlyOnce(
      expected,
      sink.records.map(r => (r.shardId, r.sequenceNumber, r.subSequenceNumber, r.partitionKey, r.payload)),
      "user records by (shardId, sequenceNumber, subSequenceNumber, partitionKey, payload)")
    RecordChecks.assertShardOrder(sink.records)
  }
}
