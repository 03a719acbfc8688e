package io.github.sparkkinesis.it

import java.util.concurrent.ConcurrentLinkedQueue

import scala.collection.JavaConverters._
import scala.concurrent.duration._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** Stopping and restarting from a checkpoint, and evaluating a batch twice, never lose or repeat a record. */
class RestartSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private val Restarts = 3

  /** The rows of the parquet sink's committed files (read through its _spark_metadata log). */
  private def parquetRows(dir: String): Seq[OutputRecord] =
    if (!new java.io.File(dir, "_spark_metadata").exists()) Nil
    else spark.read.parquet(dir).collect().toSeq.map(row => OutputRecord.fromRow(row, batchId = -1, position = -1))

  private def parquetCount(dir: String): Long =
    if (!new java.io.File(dir, "_spark_metadata").exists()) 0L else spark.read.parquet(dir).count()

  /** Polling a condition that runs a Spark job: once a second leaves the cores to the query. */
  private val SparkJobPoll = 1.second

  test("a parquet sink stopped and restarted from its checkpoint while records keep coming holds each record once") {
    // Given: a producer that keeps putting, and a parquet sink with a checkpoint
    val stream = TestStreams.createStream("it-restart-parquet", shards = 2)
    val output = newDir("parquet").getAbsolutePath
    val checkpoint = newCheckpointDir()
    val producer = new BackgroundProducer(stream, "restart", keys = 10)
    def startQuery(): StreamingQuery = readKinesis(stream, "TRIM_HORIZON").writeStream
      .format("parquet").option("path", output).option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(200.millis)).start()
    // When: the query is stopped each time it has written something new, and started again
    (1 to Restarts).foreach { run =>
      val query = startQuery()
      Eventually.await(
        s"run $run of the query to write records",
        60.seconds,
        s"progress ${query.recentProgress.toSeq}") {
        QueryChecks.failIfStopped(query)
        query.recentProgress.exists(_.numInputRows > 0)
      }
      query.stop()
    }
    val produced = producer.stop()
    val last = startQuery()
    // Then
    Eventually.await(
      s"all ${produced.size} records in the parquet sink",
      60.seconds,
      s"${parquetCount(output)} rows in the sink",
      SparkJobPoll) {
      QueryChecks.failIfStopped(last)
      parquetCount(output) >= produced.size
    }
    last.processAllAvailable()
    last.stop()
    RecordChecks.assertDeliveredExactlyOnce(produced, parquetRows(output))
    RecordChecks.assertExactlyOnce(
      produced.map(p => (p.shardId, p.sequenceNumber, 0L)),
      parquetRows(output).map(_.position3),
      "records by (shardId, sequenceNumber, subSequenceNumber)")
  }

  test("foreachBatch evaluating its batch twice without caching sees the same records; all batches hold each once") {
    // Given: a producer that keeps putting while batches run
    val stream = TestStreams.createStream("it-restart-twice", shards = 2)
    val producer = new BackgroundProducer(stream, "twice", keys = 10)
    val sink = new BatchCollector
    val mismatches = new ConcurrentLinkedQueue[String]()
    // When: each batch is counted, then collected, then collected again, without cache()
    val evaluateTwice: (DataFrame, Long) => Unit = (batch, batchId) => {
      val counted = batch.count()
      val first = batch.collect().toSeq
      val second = batch.collect().toSeq
      if (counted != first.size || first.map(key) != second.map(key)) {
        mismatches.add(s"batch $batchId: count() $counted, first collect() ${first.size} rows, second ${second.size}" +
          s", same rows in the same order: ${first.map(key) == second.map(key)}")
      }
      sink.add(batchId, first)
    }
    val query = readKinesis(stream, "TRIM_HORIZON").writeStream.option("checkpointLocation", newCheckpointDir())
      .trigger(Trigger.ProcessingTime(200.millis)).foreachBatch(evaluateTwice).start()
    Eventually.await("five non-empty batches", 60.seconds, s"${sink.batchCount} batches, ${sink.size} records") {
      QueryChecks.failIfStopped(query)
      sink.records.map(_.batchId).distinct.size >= 5
    }
    val produced = producer.stop()
    // Then
    sink.awaitRecords(query, produced.size)
    query.processAllAvailable()
    mismatches.asScala.toSeq shouldBe empty
    assert(sink.errors.isEmpty, sink.errors.mkString("; "))
    RecordChecks.assertDeliveredExactlyOnce(produced, sink.records)
  }

  private def key(row: Row): (String, String, Long) =
    (row.getAs[String]("shardId"), row.getAs[String]("sequenceNumber"), row.getAs[Long]("subSequenceNumber"))
}
