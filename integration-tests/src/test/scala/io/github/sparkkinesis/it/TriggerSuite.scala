package io.github.sparkkinesis.it

import java.io.File

import scala.concurrent.duration._

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * Trigger.AvailableNow, Trigger.Once and read limits against the emulator, into a file sink (whose output only shows
 * committed batches): each run reads exactly the records it should, once, and stops by itself.
 */
class TriggerSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private val RunTimeout = 120.seconds

  /** Starts a query from `stream` into JSON files under `out`, payload and shard as columns. */
  private def toFiles(
      stream: String,
      checkpoint: String,
      out: File,
      trigger: Trigger,
      extra: (String, String)*): StreamingQuery =
    readKinesis(stream, "TRIM_HORIZON", extra: _*)
      .selectExpr("CAST(data AS STRING) AS payload", "shardId")
      .writeStream.format("json")
      .option("path", out.getAbsolutePath)
      .option("checkpointLocation", checkpoint)
      .trigger(trigger)
      .start()

  /** The payloads the file sink has committed, with repeats. */
  private def committed(out: File): Seq[String] =
    spark.read.schema("payload STRING, shardId STRING").json(out.getAbsolutePath).collect().map(_.getString(0)).toSeq

  /** Runs a query that must stop by itself within [[RunTimeout]]; its progress reports. */
  private def runToEnd(query: StreamingQuery): Seq[Long] = {
    withClue(s"query ${query.id} did not stop by itself: ") {
      query.awaitTermination(RunTimeout.toMillis) shouldBe true
    }
    query.exception.foreach(e => fail(s"query ${query.id} failed", e))
    query.recentProgress.map(_.numInputRows).toSeq
  }

  private def sorted(puts: Seq[Put]): Seq[String] = puts.map(_.payload).sorted

  /** A Trigger.AvailableNow run of `stream` on a fresh checkpoint with `options`: its output, its progress reports. */
  private def freshAvailableNow(stream: String, options: (String, String)*): (File, Seq[Long]) = {
    val out = newDir("fresh-out")
    (out, runToEnd(toFiles(stream, newCheckpointDir(), out, Trigger.AvailableNow(), options: _*)))
  }

  test("default trigger, then AvailableNow twice with new records and a split in between, then a fresh checkpoint " +
    "with AvailableNow and a read limit: each run reads exactly its records once and stops by itself") {
    // Given: a query with the default trigger that has read the first records
    val stream = TestStreams.createStream("it-available-now", shards = 2)
    val (checkpoint, out) = (newCheckpointDir(), newDir("out"))
    val first = TestStreams.putStrings(stream, TestStreams.testRecords("first", n = 100, keys = 10))
    val running = toFiles(stream, checkpoint, out, Trigger.ProcessingTime(0L))
    Eventually.await("the first records in the files", 60.seconds, s"${committed(out).size} rows") {
      committed(out).size >= first.size
    }
    running.stop()
    committed(out).sorted shouldBe sorted(first)

    // When: AvailableNow on the same checkpoint, after more records
    val second = TestStreams.putStrings(stream, TestStreams.testRecords("second", n = 100, keys = 10))
    runToEnd(toFiles(stream, checkpoint, out, Trigger.AvailableNow()))
    // Then: exactly the new records, once
    committed(out).sorted shouldBe sorted(first ++ second)

    // When: records, a split, records in the children, and AvailableNow again
    val third = TestStreams.putStrings(stream, TestStreams.testRecords("third", n = 60, keys = 10))
    val children = TestStreams.splitShard(stream, "shardId-000000000000")
    val fourth = TestStreams.putStrings(stream, TestStreams.testRecords("fourth", n = 100, keys = 10))
    fourth.map(_.shardId).toSet.intersect(children.toSet) should not be empty
    runToEnd(toFiles(stream, checkpoint, out, Trigger.AvailableNow()))
    // Then: the parent's rest and the children's records, once each
    committed(out).sorted shouldBe sorted(first ++ second ++ third ++ fourth)

    // When: a fresh checkpoint with AvailableNow and a read limit of 50 records per batch
    val (freshOut, inputRows) = freshAvailableNow(stream, "kinesis.maxRecordsPerTrigger" -> "50")
    // Then: the whole stream once, in several bounded batches
    committed(freshOut).sorted shouldBe sorted(first ++ second ++ third ++ fourth)
    inputRows.count(_ > 0) should be >= 8
    inputRows.max should be <= 50L

    // When: another fresh checkpoint with both limits, kinesis.maxBytesPerTrigger the smaller (about 20 records)
    val all = first ++ second ++ third ++ fourth
    val (smallest, largest) = (all.map(_.data.length).min, all.map(_.data.length).max)
    val maxBytes = 20 * largest
    val (bytesOut, byBytes) = freshAvailableNow(
      stream,
      "kinesis.maxRecordsPerTrigger" -> "50",
      "kinesis.maxBytesPerTrigger" -> maxBytes.toString)
    // Then: the whole stream once, each batch within the byte limit plus less than a record for each of its shards (at
    // most three: the parent and its children)
    committed(bytesOut).sorted shouldBe sorted(all)
    byBytes.max should be <= (maxBytes / smallest + 3).toLong
    byBytes.max should be < 50L
  }

  test("Trigger.Once reads what is there in one batch and stops; the next run goes on without repeating a record") {
    val stream = TestStreams.createStream("it-once", shards = 2)
    val (checkpoint, out) = (newCheckpointDir(), newDir("out"))
    val first = TestStreams.putStrings(stream, TestStreams.testRecords("first", n = 80, keys = 8))
    val firstRun = runToEnd(toFiles(stream, checkpoint, out, Trigger.Once()))
    firstRun.count(_ > 0) shouldBe 1
    committed(out).sorted shouldBe sorted(first)

    val second = TestStreams.putStrings(stream, TestStreams.testRecords("second", n = 80, keys = 8))
    runToEnd(toFiles(stream, checkpoint, out, Trigger.Once()))
    committed(out).sorted shouldBe sorted(first ++ second)
  }
}
