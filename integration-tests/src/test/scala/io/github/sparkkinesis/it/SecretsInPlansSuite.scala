package io.github.sparkkinesis.it

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import scala.collection.JavaConverters._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import SinkHarness.{keyed, readBack}

/**
 * Secret option values (secret key, session token, external ids, a provider's parameter, under their own names and
 * alias spellings) never reach Spark's plans: not `explain(extended = true)` of the source, the sink or a batch read,
 * not the event log (which holds what the SQL tab shows), not the driver's log; nor do the endpoints reach the plans.
 */
class SecretsInPlansSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  test("Given secret options on a Kinesis-to-Kinesis streaming query and a batch read and write, when they run " +
    "with an event log, then no plan, event or log line shows a secret value") {
    // Given a source stream with records and a target stream
    val source = TestStreams.createStream("it-secrets-source", shards = 1)
    val target = TestStreams.createStream("it-secrets-target", shards = 1)
    val puts = TestStreams.putStrings(source, TestStreams.testRecords("secret-plan", 20, keys = 4))
    val dir = newDir("secrets")
    val (eventLog, explainFile, log) =
      (new File(dir, "events"), new File(dir, "explain.txt"), new File(dir, "child.log"))
    eventLog.mkdirs()

    // When a child JVM with an event log runs the queries
    val child = ChildJvm.start(
      SecretsDriver,
      log,
      eventLog.getAbsolutePath,
      source,
      target,
      newCheckpointDir(),
      explainFile.getAbsolutePath)
    if (!child.waitFor(240, TimeUnit.SECONDS)) {
      child.destroyForcibly()
      fail(s"the child JVM did not finish within 240 s; ${ChildJvm.tail(log)}")
    }
    withClue(ChildJvm.tail(log)) { child.exitValue() shouldBe 0 }

    // Then the queries ran (every record copied twice: streaming and batch) and their plans showed the options' keys
    val copied = keyed(readBack(target)._1)
    copied.distinct should contain theSameElementsAs puts.map(p => (p.partitionKey, p.payload))
    copied.size should be >= 2 * puts.size
    val explained = new String(Files.readAllBytes(explainFile.toPath), UTF_8)
    // Spark 3.5 also shows the sink's options in the streaming query's plan; Spark 4 names only its table.
    explained should (include("roleExternalId") and include("StreamingRelationV2"))
    val events = Files.walk(eventLog.toPath).iterator().asScala.filter(Files.isRegularFile(_))
      .map(p => new String(Files.readAllBytes(p), UTF_8)).mkString("\n")
    events should include("SparkListenerSQLExecutionStart")

    // And no secret value appears in the plans, the event log or the child's log
    for ((what, text) <- Seq("explain output" -> explained, "event log" -> events, "log" -> ChildJvm.output(log));
      secret <- Secrets.all) {
      withClue(s"$what shows secret '$secret': ")(text.contains(secret) shouldBe false)
    }

    // And the plans show no endpoint: Spark hides the options named *url*, the scan's and write's descriptions too
    explained should include("endpoint=*********(redacted)")
    for ((what, text) <- Seq("explain output" -> explained, "event log" -> events);
      endpoint <- Seq(KinesisMock.endpoint, Moto.endpoint)) {
      withClue(s"$what shows endpoint '$endpoint': ")(text.contains(endpoint) shouldBe false)
    }
  }
}
