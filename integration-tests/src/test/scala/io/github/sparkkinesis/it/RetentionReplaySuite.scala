package io.github.sparkkinesis.it

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.concurrent.duration._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryException, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * A batch planned before the query stopped, whose records retention removed while it was stopped. kinesis-mock does not
 * trim, so the test moves the batch's recorded end (in the checkpoint's metadata) before the oldest record the shard
 * holds, which is what a record trimmed since, or a stream deleted and created again, looks like to a restart.
 */
class RetentionReplaySuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /** Starts a query whose sink reads each batch, then fails: batch 0 is planned and read, never committed. */
  private def startFailing(stream: String, checkpoint: String): StreamingQuery = {
    val failing: (DataFrame, Long) => Unit = (batch, _) => {
      batch.collect()
      throw new IllegalStateException("the sink is down")
    }
    readKinesis(stream, "TRIM_HORIZON").writeStream.option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(200.millis)).foreachBatch(failing).start()
  }

  /** The task end records of `batch` in the checkpoint's metadata. */
  private def endRecords(checkpoint: String, batch: Long): Seq[File] = {
    def all(f: File): Seq[File] = if (f.isDirectory) f.listFiles().toSeq.flatMap(all) else Seq(f)
    all(new File(checkpoint)).filter(f =>
      f.getName.endsWith(".json") && f.getParentFile.getName == batch.toString &&
        f.getParentFile.getParentFile.getName == "tasks")
  }

  private def messages(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")

  test("a batch whose records expired while the query was stopped fails the restart once under failOnDataLoss=true; " +
    "with false, the same checkpoint goes on from the trim horizon and holds each record once") {
    // Given: batch 0 read but never committed, and its recorded end since trimmed
    val stream = TestStreams.createStream("it-retention-replay", shards = 1)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", 5, keys = 1))
    val checkpoint = newCheckpointDir()
    val first = startFailing(stream, checkpoint)
    intercept[StreamingQueryException](first.awaitTermination(60000L))
    val records = endRecords(checkpoint, 0L)
    records should not be empty
    val last = before.map(_.sequenceNumber).maxBy(BigInt(_))
    val trimmed = (BigInt(before.map(_.sequenceNumber).minBy(BigInt(_))) - 1).toString
    records.foreach { f =>
      val json = new String(Files.readAllBytes(f.toPath), UTF_8)
      json should include(last)
      Files.write(f.toPath, json.replace(last, trimmed).getBytes(UTF_8))
    }

    // When: the query restarts with the default kinesis.failOnDataLoss=true
    val sink = new BatchCollector
    val failed = sink.start(readKinesis(stream, "TRIM_HORIZON"), checkpoint)
    val error = intercept[StreamingQueryException](failed.awaitTermination(60000L))
    // Then: it fails at once, saying what was lost and what to do
    messages(error) should (include("trimmed") and include("kinesis.failOnDataLoss=false") and
      include("same checkpoint"))
    sink.records shouldBe empty

    // When: it restarts on the same checkpoint with kinesis.failOnDataLoss=false, and more records come
    val recovered = new BatchCollector
    val query = recovered.start(readKinesis(stream, "TRIM_HORIZON", "kinesis.failOnDataLoss" -> "false"), checkpoint)
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", 3, keys = 1))
    // Then: the batch reads nothing, and the query goes on from the oldest retained record, each record once
    assertReadsExactly(query, recovered, before ++ after)
    query.stop()
  }
}
