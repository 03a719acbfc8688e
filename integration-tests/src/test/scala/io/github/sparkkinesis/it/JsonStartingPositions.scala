package io.github.sparkkinesis.it

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * The JSON map form of `kinesis.startingPosition` (AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, LATEST, unnamed shards at
 * TRIM_HORIZON) checked on an exact set of records, read with `options` (polling, or fan-out).
 */
trait JsonStartingPositions { self: AnyFunSuite with Matchers with SparkIntegrationSuite =>

  protected def checkJsonStartingPositions(streamPrefix: String, options: (String, String)*): Unit = {
    // Given: four shards, each holding some records
    val stream = TestStreams.createStream(streamPrefix, shards = 4)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 160, keys = 40))
    val shardIds = TestStreams.openShards(stream).map(_.shardId())
    val byShard = shardIds.map(s => s -> before.filter(_.shardId == s).sortBy(p => BigInt(p.sequenceNumber))).toMap
    all(byShard.values.map(_.size)) should be >= 4 // the test's own precondition: every shard has records
    val Seq(at, after, latest, unnamed) = shardIds
    val json =
      s"""{"$at":{"iteratorType":"AT_SEQUENCE_NUMBER","iteratorPosition":"${byShard(at)(2).sequenceNumber}"},
         | "$after":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"${byShard(after)(2).sequenceNumber}"},
         | "$latest":{"iteratorType":"LATEST"}}""".stripMargin
    // When
    val (query, sink) = startCollecting(readKinesis(stream, json, options: _*))
    query.processAllAvailable()
    val later = TestStreams.putStrings(stream, TestStreams.testRecords("later", n = 80, keys = 40))
    // Then
    val expected = byShard(at).drop(2) ++ byShard(after).drop(3) ++ byShard(unnamed) ++ later
    assertReadsExactly(query, sink, expected)
    sink.records.filter(_.shardId == latest).map(_.payload).foreach(_ should startWith("later-"))
  }
}
