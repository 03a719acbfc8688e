package io.github.sparkkinesis.it

import java.io.File

import scala.concurrent.duration._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.{DataStreamWriter, StreamingQuery}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.sink.KinesisForeachWriter

/**
 * Kinesis to Kinesis in real-time mode against kinesis-mock: a query reads one stream and writes another through
 * [[KinesisForeachWriter]] (the `foreach` sink real-time mode's allowlist accepts), and through the `aws-kinesis` sink
 * with the allowlist check off. Each target record carries its source record's position, so the target can be compared
 * with what was put, and deduplicated as a downstream consumer would.
 */
class RealTimeKinesisSinkSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private val AllowlistCheck = "spark.sql.streaming.realTimeMode.allowlistCheck"

  private val Json = new ObjectMapper()

  /** One target record, read back: the source record it was written from. */
  private final case class Copied(shardId: String, sequenceNumber: String, partitionKey: String, payload: String)

  /** `source` as the sink's columns: the source record's key, and its position, key and payload as JSON data. */
  private def toSink(source: String): DataFrame = readKinesis(source, "TRIM_HORIZON").selectExpr(
    "to_json(struct(streamName, shardId, sequenceNumber, subSequenceNumber, partitionKey, CAST(data AS STRING) AS " +
      "payload)) " +
      "AS data",
    "partitionKey")

  private def realTime(writer: DataStreamWriter[_], checkpoint: String, batch: String = "5 seconds"): StreamingQuery =
    writer.outputMode("update").option("checkpointLocation", checkpoint).trigger(RealTimeSink.trigger(batch)).start()

  private def throughForeach(source: String, target: String, checkpoint: String, batch: String): StreamingQuery = {
    val df = toSink(source)
    realTime(
      df.writeStream.foreach(KinesisForeachWriter(SinkHarness.sinkOptions(Some(target)), df.schema)),
      checkpoint,
      batch)
  }

  private def commits(checkpoint: String): Int =
    Option(new File(checkpoint, "commits").listFiles()).toSeq.flatten.count(_.getName.forall(_.isDigit))

  /**
   * Every record in `target`, as the source records it was written from; parsed here, not by a Spark job, which would
   * wait for a task slot the real-time query holds for its whole batch.
   */
  private def copied(target: String): Seq[Copied] = SinkHarness.readBack(target)._1.map { landed =>
    val json = Json.readTree(landed.payload)
    Copied(
      json.get("shardId").asText,
      json.get("sequenceNumber").asText,
      json.get("partitionKey").asText,
      json.get("payload").asText)
  }

  private def asCopied(puts: Seq[Put]): Seq[Copied] =
    puts.map(p => Copied(p.shardId, p.sequenceNumber, p.partitionKey, p.payload))

  /** Waits until `target` holds a copy of every one of `puts`, failing early if the query fails. */
  private def awaitCopies(target: String, puts: Seq[Put], query: StreamingQuery): Seq[Copied] = {
    val want = asCopied(puts).toSet
    Eventually.awaitValue(
      s"${want.size} records in the target stream",
      90.seconds, {
        s"${want.diff(copied(target).toSet).size} missing; ${query.exception.getOrElse("")}"
      },
      every = 500.millis) {
      query.exception.foreach(e => Eventually.giveUp("the query failed", e))
      val got = copied(target)
      if (want.subsetOf(got.toSet)) Some(got) else None
    }
  }

  test("Given a real-time query writing through KinesisForeachWriter, the target stream gets every source record " +
    "exactly once while it runs, and each at least once across a restart (exactly once by source position)") {
    // Given a source stream with records, and a real-time query copying it to a target stream in one long batch
    val (source, target) = (TestStreams.createStream("it-k2k-src", 2), TestStreams.createStream("it-k2k-dst", 2))
    val checkpoint = newCheckpointDir()
    val before = TestStreams.putStrings(source, TestStreams.testRecords("before", 40, keys = 8))
    val first = throughForeach(source, target, checkpoint, "10 minutes")
    // When records come while it runs
    val during = TestStreams.putStrings(source, TestStreams.testRecords("during", 40, keys = 8))
    // Then the target holds each of them exactly once (no failure, so nothing is written twice), within the batch
    val running = awaitCopies(target, before ++ during, first)
    RecordChecks.assertExactlyOnce(asCopied(before ++ during), running, "target stream of a running query")
    commits(checkpoint) shouldBe 0
    // When the query stops in the middle of that batch, records come while it is down, and it starts again
    first.stop()
    val down = TestStreams.putStrings(source, TestStreams.testRecords("down", 40, keys = 8))
    val second = throughForeach(source, target, checkpoint, "5 seconds")
    val after = TestStreams.putStrings(source, TestStreams.testRecords("after", 40, keys = 8))
    val all = before ++ during ++ down ++ after
    val rows = awaitCopies(target, all, second)
    second.stop()
    // Then every source record is in the target, and deduplicated by source position exactly once; the copies
    // beyond that are the stopped batch's rows, which the restart wrote again (at least once)
    RecordChecks.assertExactlyOnce(asCopied(all), rows.distinct, "target stream by source position, after a restart")
    RecordChecks.assertExactlyOnce(asCopied(before ++ during), rows.diff(rows.distinct), "rows written twice")
    info(s"${all.size} records, ${rows.size - rows.distinct.size} written again after the restart")
  }

  test("Given the aws-kinesis sink in a real-time query, Spark refuses it with its allowlist check on, and with " +
    "the check off the target stream gets every source record exactly once") {
    val (source, target) = (TestStreams.createStream("it-k2k-fmt-src", 1), TestStreams.createStream("it-k2k-fmt", 1))
    def sinkQuery(): StreamingQuery = realTime(
      toSink(source).writeStream.format("aws-kinesis").options(SinkHarness.sinkOptions(Some(target))),
      newCheckpointDir())
    // Given the allowlist check on (Spark's default), when the query starts, then it fails naming the sink
    val refused = intercept[Exception] {
      val query = sinkQuery()
      query.awaitTermination(60000L)
      query.exception.foreach(e => throw e)
    }
    Iterator.iterate[Throwable](refused)(_.getCause).takeWhile(_ != null).map(String.valueOf(_)).mkString(" | ") should
      include("allowlist")
    // Given the check off, when records come, then the target holds each exactly once
    val puts = TestStreams.putStrings(source, TestStreams.testRecords("fmt", 30, keys = 6))
    spark.conf.set(AllowlistCheck, "false")
    try {
      val query = sinkQuery()
      val rows = awaitCopies(target, puts, query)
      query.stop()
      RecordChecks.assertExactlyOnce(asCopied(puts), rows, "target stream written by the aws-kinesis sink")
    } finally spark.conf.unset(AllowlistCheck)
  }
}
