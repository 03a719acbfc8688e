package io.github.sparkkinesis.it

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * Splits and merges under a reader: every record exactly once, each shard in sequence order, and for every partition
 * key the records of a parent shard delivered before those of its children.
 */
class ReshardingSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /** Exactly once, in shard order, and in per-key lineage order (parents first) over the whole delivery. */
  private def assertOrderedExactlyOnce(stream: String, puts: Seq[Put], sink: BatchCollector): Unit = {
    assert(sink.errors.isEmpty, sink.errors.mkString("; "))
    val delivered = sink.records
    RecordChecks.assertDeliveredExactlyOnce(puts, delivered)
    RecordChecks.assertShardOrder(delivered)
    RecordChecks.assertPerKeyOrder(
      RecordChecks.expectedOrder(puts, TestStreams.listShards(stream)),
      delivered.map(r => (r.partitionKey, r.payload)))
  }

  test("a split and a merge while the query runs: records before, during and after, once each, parents first") {
    // Given: a running query that has read the first records
    val stream = TestStreams.createStream("it-reshard-live", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 100, keys = 10))
    val (query, sink) = startCollecting(readKinesis(stream, "TRIM_HORIZON"))
    sink.awaitRecords(query, before.size)
    // When: the stream is split and merged while a producer keeps putting
    val producer = new BackgroundProducer(stream, "during", keys = 10)
    val children = TestStreams.splitShard(stream, "shardId-000000000000")
    Eventually.await("records put into the split's children", TestStreams.OperationTimeout) {
      producer.produced.exists(p => children.contains(p.shardId))
    }
    val (a, b) = TestStreams.adjacentOpenShards(stream)
    val merged = TestStreams.mergeShards(stream, a, b)
    Eventually.await("records put into the merged shard", TestStreams.OperationTimeout) {
      producer.produced.exists(_.shardId == merged)
    }
    val during = producer.stop()
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", n = 100, keys = 10))
    // Then
    val everything = before ++ during ++ after
    sink.awaitRecords(query, everything.size)
    query.processAllAvailable()
    assertOrderedExactlyOnce(stream, everything, sink)
    sink.records.map(_.shardId).toSet should contain allOf (children.head, children.last, merged)
  }

  test("resharding while the query is stopped: the restart reads the parents' rest, then the children, once each") {
    // Given: a query that read some records and stopped, and records it has not read yet in the parent shards
    val stream = TestStreams.createStream("it-reshard-stopped", shards = 2)
    val checkpoint = newCheckpointDir()
    val sink = new BatchCollector
    val df = readKinesis(stream, "TRIM_HORIZON")
    val first = TestStreams.putStrings(stream, TestStreams.testRecords("first", n = 100, keys = 10))
    val firstRun = sink.start(df, checkpoint)
    sink.awaitRecords(firstRun, first.size)
    firstRun.stop()
    val unreadInParents = TestStreams.putStrings(stream, TestStreams.testRecords("parents", n = 60, keys = 10))
    // When: the stream is split and merged, records go to the new shards, and the query restarts
    val children = TestStreams.splitShard(stream, "shardId-000000000001")
    val (a, b) = TestStreams.adjacentOpenShards(stream)
    val merged = TestStreams.mergeShards(stream, a, b)
    val inChildren = TestStreams.putStrings(stream, TestStreams.testRecords("children", n = 100, keys = 10))
    val secondRun = sink.start(readKinesis(stream, "TRIM_HORIZON"), checkpoint)
    val afterRestart = TestStreams.putStrings(stream, TestStreams.testRecords("restarted", n = 60, keys = 10))
    // Then
    val everything = first ++ unreadInParents ++ inChildren ++ afterRestart
    sink.awaitRecords(secondRun, everything.size)
    secondRun.processAllAvailable()
    assertOrderedExactlyOnce(stream, everything, sink)
    (inChildren ++ afterRestart).map(_.shardId).toSet should contain(merged)
    children should have size 2
  }

  test("UpdateShardCount while the query runs (2 to 4 shards): every record once, parents first") {
    // Given: a running query that has read the first records
    val stream = TestStreams.createStream("it-reshard-count", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", n = 100, keys = 10))
    val (query, sink) = startCollecting(readKinesis(stream, "TRIM_HORIZON"))
    sink.awaitRecords(query, before.size)
    // When: the shard count is doubled while a producer keeps putting
    val producer = new BackgroundProducer(stream, "during", keys = 10)
    val reshaped = TestStreams.updateShardCount(stream, 4)
    Eventually.await("records put into the new shards", TestStreams.OperationTimeout) {
      producer.produced.exists(p => reshaped.exists(_.shardId == p.shardId))
    }
    val everything = before ++ producer.stop() ++
      TestStreams.putStrings(stream, TestStreams.testRecords("after", n = 100, keys = 10))
    // Then
    sink.awaitRecords(query, everything.size)
    query.processAllAvailable()
    assertOrderedExactlyOnce(stream, everything, sink)
  }
}
