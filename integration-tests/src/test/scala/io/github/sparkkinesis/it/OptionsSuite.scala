package io.github.sparkkinesis.it

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.util.Locale

import scala.concurrent.duration._

import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * Bad options fail at load() naming the option, a missing stream fails the query naming it, and the secret stays
 * secret.
 */
class OptionsSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /** Distinctive, so that finding it anywhere it should not be is unambiguous. */
  private val Secret = "itest-SECRET-4f1c9a7e-never-print-me"

  private def options(stream: String, extra: (String, String)*): Map[String, String] =
    SparkHarness.kinesisOptions(stream, "TRIM_HORIZON") ++ Map("kinesis.awsSecretKey" -> Secret) ++ extra

  private def load(options: Map[String, String]): DataFrame =
    spark.readStream.format("aws-kinesis").options(options).load()

  /** Every message in the cause chain, so a wrapped error's text is checked too. */
  private def fullText(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(t => s"${t.getClass.getName}: ${t.getMessage}").mkString(
      "\n")

  /**
   * load() fails with an IllegalArgumentException that names `option` (in any case: Spark's options are
   * case-insensitive) and not the secret.
   */
  private def assertLoadFailsNaming(option: String, options: Map[String, String]): Unit = {
    val e = intercept[IllegalArgumentException](load(options))
    e.getMessage.toLowerCase(Locale.ROOT) should include(option.toLowerCase(Locale.ROOT))
    fullText(e) should not include Secret
  }

  /** What Console.out received while `body` ran: explain() prints there. */
  private def printed(body: => Unit): String = {
    val out = new ByteArrayOutputStream()
    Console.withOut(out)(body)
    out.toString(UTF_8.name())
  }

  /** `df.queryExecution.toString`. By reflection: on Spark 4 the DataFrame type is an interface without it. */
  private def queryExecutionText(df: DataFrame): String = df.getClass.getMethod("queryExecution").invoke(df).toString

  test("a missing kinesis.streamName fails load() naming the option") {
    assertLoadFailsNaming("kinesis.streamName", options("unused") - "kinesis.streamName")
  }

  test("a kinesis.maxFetchRecordsPerShard that is not a number fails load() naming the option") {
    assertLoadFailsNaming(
      "kinesis.maxFetchRecordsPerShard",
      options("unused", "kinesis.maxFetchRecordsPerShard" -> "abc"))
  }

  test("an unknown kinesis.* option (a typo) fails load() naming it") {
    assertLoadFailsNaming("kinesis.startingPositon", options("unused", "kinesis.startingPositon" -> "LATEST"))
  }

  test("a stream that does not exist fails the query with a message naming the stream, without the secret") {
    // Given
    val missing = s"it-missing-${System.nanoTime()}"
    // When
    val query = load(options(missing)).writeStream.format("memory").queryName("missing_stream")
      .option("checkpointLocation", newCheckpointDir()).start()
    Eventually.await(s"the query on missing stream $missing to fail", 60.seconds) {
      !query.isActive
    }
    // Then
    val error = query.exception.getOrElse(fail(s"the query on missing stream $missing stopped without an error"))
    fullText(error) should include(missing)
    fullText(error) should not include Secret
  }

  test("the secret key appears in no plan, explain output or progress report") {
    // Given
    val stream = TestStreams.createStream("it-options-secret", shards = 1)
    TestStreams.putStrings(stream, TestStreams.testRecords("secret", n = 10, keys = 2))
    val df = load(options(stream))
    // When
    val query = df.writeStream.format("memory").queryName("secret_check")
      .option("checkpointLocation", newCheckpointDir()).start()
    query.processAllAvailable()
    val texts = Map(
      "df.queryExecution.toString" -> queryExecutionText(df),
      "df.explain(true)" -> printed(df.explain(true)),
      "query.explain(true)" -> printed(query.explain(true)),
      "query.lastProgress" -> String.valueOf(query.lastProgress),
      "query.recentProgress" -> query.recentProgress.map(_.json).mkString("\n"))
    // Then
    spark.table("secret_check").count() shouldBe 10
    texts.foreach { case (what, text) =>
      withClue(s"$what: ") {
        text should not be empty
        text should not include Secret
      }
    }
  }
}
