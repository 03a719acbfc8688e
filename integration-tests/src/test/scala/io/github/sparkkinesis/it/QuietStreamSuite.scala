package io.github.sparkkinesis.it

import scala.concurrent.duration._

import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * A quiet stream with the default trigger: the source starts no micro-batch while nothing is new, and a record put into
 * the quiet stream reaches the sink promptly. Latencies are reported, not asserted (bench/ measures them).
 */
class QuietStreamSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /** How long the stream is left quiet between puts: an observation window for "no batch", not a synchronisation. */
  private val QuietWindow = 2.seconds

  test("with the default trigger, a quiet stream runs no empty micro-batch and each new record arrives promptly") {
    // Given: a query with the default trigger (as fast as possible) on a quiet stream
    val stream = TestStreams.createStream("it-quiet", shards = 2)
    val sink = new BatchCollector
    val query = sink.start(readKinesis(stream, "LATEST"), newCheckpointDir(), Trigger.ProcessingTime(0L))
    query.processAllAvailable()
    // When: single records are put with quiet periods in between
    val latenciesMs = (1 to 5).map { round =>
      Thread.sleep(QuietWindow.toMillis)
      val sentAt = System.nanoTime()
      TestStreams.putStrings(stream, Seq(s"key-$round" -> s"round-$round"))
      sink.awaitRecords(query, round, 30.seconds)
      (System.nanoTime() - sentAt) / 1000000L
    }
    // Then: every batch the sink saw held records, one batch per put
    sink.records.map(_.payload) shouldBe (1 to 5).map(r => s"round-$r")
    sink.batchCount shouldBe 5
    info(s"put-to-sink latencies (ms): ${latenciesMs.mkString(", ")}")
  }
}
