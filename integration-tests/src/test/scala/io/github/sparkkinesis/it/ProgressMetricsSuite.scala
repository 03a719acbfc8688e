package io.github.sparkkinesis.it

import scala.collection.JavaConverters._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The source's metrics in every StreamingQueryProgress, as a user reads them from `query.lastProgress`. */
class ProgressMetricsSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  test("a batch's progress carries the lag, shards, records, bytes and calls of the Kinesis source") {
    val stream = TestStreams.createStream("it-metrics", shards = 2)
    val puts = TestStreams.putStrings(stream, TestStreams.testRecords("m", n = 50, keys = 5))
    val (query, sink) = startCollecting(readKinesis(stream, "TRIM_HORIZON"))
    assertReadsExactly(query, sink, puts)
    val withData = query.recentProgress.filter(_.numInputRows > 0)
    withData should not be empty
    val metrics = withData.map(_.sources.head.metrics.asScala).toSeq
    metrics.map(_("recordsRead").toLong).sum shouldBe 50
    metrics.map(_("bytesRead").toLong).sum shouldBe puts.map(_.data.length).sum
    metrics.foreach { m =>
      m("shardsOpen") shouldBe "2"
      m("shardsRead").toInt should be >= 1
      m("getRecordsCalls").toLong should be >= 1L
      m("throttledCalls") shouldBe "0"
      m("maxMsBehindLatest").toLong should be >= m("avgMsBehindLatest").toLong
      m("avgMsBehindLatest").toLong should be >= m("minMsBehindLatest").toLong
    }
  }
}
