package io.github.sparkkinesis.it

import scala.collection.JavaConverters._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** Several streams in one query against the emulator: each record once, with its stream; streams added later. */
class MultiStreamSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private def tagged(stream: String, puts: Seq[Put]): Seq[(String, String)] = puts.map(p => stream -> p.payload)

  test("two streams, one by name and one by ARN, with a split in one while running: every record once, tagged " +
    "with its stream, and each stream's metrics in the progress") {
    val orders = TestStreams.createStream("it-multi-orders", shards = 2)
    val clicks = TestStreams.createStream("it-multi-clicks", shards = 1)
    val first = tagged(orders, TestStreams.putStrings(orders, TestStreams.testRecords("o", n = 60, keys = 6))) ++
      tagged(clicks, TestStreams.putStrings(clicks, TestStreams.testRecords("c", n = 40, keys = 4)))
    val (query, sink) =
      startCollecting(readKinesis(orders, "TRIM_HORIZON", "kinesis.streamARN" -> TestStreams.arnOf(clicks)))
    sink.awaitRecords(query, first.size)
    TestStreams.splitShard(clicks, TestStreams.openShards(clicks).head.shardId())
    val second = tagged(orders, TestStreams.putStrings(orders, TestStreams.testRecords("o2", n = 30, keys = 6))) ++
      tagged(clicks, TestStreams.putStrings(clicks, TestStreams.testRecords("c2", n = 50, keys = 5)))
    sink.awaitRecords(query, first.size + second.size)
    query.processAllAvailable()
    RecordChecks.assertExactlyOnce(first ++ second, sink.records.map(r => r.streamName -> r.payload), "two streams")
    RecordChecks.assertShardOrder(sink.records.filter(_.streamName == clicks))
    val metrics = query.recentProgress.filter(_.numInputRows > 0).map(_.sources.head.metrics.asScala)
    metrics.map(_.getOrElse(s"stream.$orders.recordsRead", "0").toLong).sum shouldBe 90
    metrics.map(_.getOrElse(s"stream.$clicks.recordsRead", "0").toLong).sum shouldBe 90
    metrics.map(_("recordsRead").toLong).sum shouldBe 180
    query.stop()
  }

  test("a query restarted with a second stream reads that stream from kinesis.startingPosition and goes on with " +
    "the first where it was") {
    val a = TestStreams.createStream("it-multi-a", shards = 1)
    val b = TestStreams.createStream("it-multi-b", shards = 1)
    val checkpoint = newCheckpointDir()
    val firstA = tagged(a, TestStreams.putStrings(a, TestStreams.testRecords("a", n = 20, keys = 2)))
    val backlogB = tagged(b, TestStreams.putStrings(b, TestStreams.testRecords("b", n = 15, keys = 3)))
    val sink = new BatchCollector
    val one = sink.start(readKinesis(a, "TRIM_HORIZON"), checkpoint)
    sink.awaitRecords(one, firstA.size)
    one.processAllAvailable()
    one.stop()
    val laterA = tagged(a, TestStreams.putStrings(a, TestStreams.testRecords("a2", n = 10, keys = 2)))
    val two = sink.start(readKinesis(s"$a,$b", "TRIM_HORIZON"), checkpoint)
    val all = firstA ++ laterA ++ backlogB
    sink.awaitRecords(two, all.size)
    two.processAllAvailable()
    two.stop()
    assert(sink.errors.isEmpty, sink.errors.mkString("; "))
    RecordChecks.assertExactlyOnce(all, sink.records.map(r => r.streamName -> r.payload), "after adding a stream")
  }
}
