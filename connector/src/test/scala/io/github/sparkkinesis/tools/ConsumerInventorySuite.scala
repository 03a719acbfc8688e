package io.github.sparkkinesis.tools

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileUtil, Path}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{ConsumerTags, FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.Json
import io.github.sparkkinesis.options.FanOutOptions
import io.github.sparkkinesis.source.planning.FanOutConsumer

class ConsumerInventorySuite extends AnyFunSuite with Matchers {

  private val hour = 3600 * 1000L

  /**
   * Stream s with consumers as queries leave them, registered by the connector's own [[FanOutConsumer]]: `kept` (its
   * query's checkpoint still records it), `orphan` (its checkpoint was deleted), `renamed` (its query now reads through
   * `renamedTo`, registered later), `admin` (registered by someone else, untagged), `unreadable` (its tags name a
   * checkpoint on a file system Hadoop does not have) and `young` (checkpoint deleted, registered a minute ago).
   */
  private final class Streams {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    private val root = Files.createTempDirectory("checkpoints").toFile

    def register(name: String, checkpoint: Path): String =
      new FanOutConsumer(
        fake,
        "s",
        FanOutOptions(Some(name), None, deregisterOnStop = false, 60000L, 3),
        checkpoint,
        new Configuration(),
        60000L,
        clock,
        ms => clock.advance(ms)).arn

    private def checkpoint(name: String) = new Path(new java.io.File(root, name).toURI)

    val kept: String = register("kept", checkpoint("kept"))
    val orphan: String = register("orphan", checkpoint("orphan"))
    FileUtil.fullyDelete(new java.io.File(root, "orphan"))
    val renamed: String = register("renamed", checkpoint("renamed"))
    val admin: String = fake.registerConsumer(fake.streamArn("s"), "admin").arn
    val unreadable: String = fake.registerConsumer(fake.streamArn("s"), "unreadable").arn
    fake.tagConsumer(unreadable, ConsumerTags.ofCheckpoint("nofs://bucket/checkpoint"))
    clock.advance(2 * hour)
    val renamedTo: String = register("renamed-to", checkpoint("renamed"))
    val young: String = register("young", checkpoint("young"))
    FileUtil.fullyDelete(new java.io.File(root, "young"))
    clock.advance(60 * 1000L)

    val inventory = new ConsumerInventory(fake, new Configuration(), clock)

    def run(args: String*): (Int, String) = {
      val out = new ByteArrayOutputStream()
      val code = ConsumersCli.execute(ConsumersCli.parse(args), fake, new Configuration(), clock, new PrintStream(out))
      code -> out.toString("UTF-8")
    }
  }

  test("given consumers of the connector and of others, when listed, then each shows whether the checkpoint that " +
    "registered it still holds it") {
    val t = new Streams()
    val holdings = t.inventory.entries("s").map(e => e.consumer.name -> e.holding.name).toMap
    holdings shouldBe Map(
      "kept" -> "held",
      "orphan" -> "not-held",
      "renamed" -> "not-held",
      "renamed-to" -> "held",
      "admin" -> "not-ours",
      "unreadable" -> "unreadable",
      "young" -> "not-held")
    val reasons = t.inventory.entries("s").map(e => e.consumer.name -> e.holding.reason).toMap
    reasons("orphan") should (include("not held: checkpoint file:") and include("/orphan no longer exists"))
    reasons("renamed") should include("/renamed records no longer this consumer")
    reasons("kept") should (include("held: file:") and include("/kept/efo-consumer-s records it"))
    reasons("unreadable") should include("No FileSystem for scheme")
  }

  test("given consumers no checkpoint holds, when pruned as a dry run, then it names those old enough and changes " +
    "nothing") {
    val t = new Streams()
    val (code, out) = t.run("prune", "--stream", "s", "--older-than", "1h")
    code shouldBe 0
    out should include(s"would-deregister orphan (${t.orphan})")
    out should include(s"would-deregister renamed (${t.renamed})")
    out should include("Would deregister 2 (a dry run: nothing changed; add --yes to deregister)")
    out should not include "would-deregister young"
    t.fake.callsOf("DeregisterStreamConsumer") shouldBe 0
    t.fake.fanOut.consumerNames should have size 7
  }

  test("given consumers no checkpoint holds, when pruned with --yes, then exactly those old enough are deregistered " +
    "and a second prune finds nothing") {
    val t = new Streams()
    val (code, out) = t.run("prune", "--stream", t.fake.streamArn("s"), "--older-than", "1h", "--yes", "--json")
    code shouldBe 0
    val report = Json.read(out, "the report")
    Json.fields(report).map(_._1).toSet shouldBe Set("stream", "consumers", "prune", "dryRun")
    report.get("dryRun").asBoolean shouldBe false
    val actions = (0 until report.get("prune").size).map(report.get("prune").get)
    actions.map(a => a.get("arn").asText -> a.get("action").asText).toSet shouldBe
      Set(t.orphan -> "deregistered", t.renamed -> "deregistered")
    t.fake.fanOut.consumerNames.toSet shouldBe Set("kept", "renamed-to", "admin", "unreadable", "young")
    t.run("prune", "--stream", "s", "--older-than", "0s")._2 should include("would-deregister young")
    t.run("prune", "--stream", "s", "--older-than", "1h")._2 should include("Nothing to prune")
  }

  test("given a query that reuses by name a consumer another query's checkpoint registered, when that checkpoint is " +
    "deleted, then the consumer is held by the reusing query and prune leaves it; an administrator's consumer reused " +
    "by name is never tagged as the connector's") {
    val t = new Streams()
    val root = Files.createTempDirectory("reuse")
    val reusing = new Path(root.resolve("reusing").toUri)
    val tagReadsBefore = t.fake.callsOf("ListTagsForResource")
    t.register("orphan", reusing) shouldBe t.orphan
    t.fake.callsOf("ListTagsForResource") - tagReadsBefore shouldBe 1 // its tags are read once, to adopt and re-tag
    t.register("admin", new Path(root.resolve("admin-reader").toUri)) shouldBe t.admin

    val holdings = t.inventory.entries("s").map(e => e.consumer.name -> e).toMap
    holdings("orphan").holding.name shouldBe "held"
    holdings("orphan").holding.reason should include("/reusing/efo-reader-s records it")
    holdings("orphan").checkpoint shouldBe Some(reusing.toString)
    holdings("admin").holding.name shouldBe "not-ours"
    t.fake.consumerTags(t.admin) shouldBe empty
    t.run("prune", "--stream", "s", "--older-than", "1h", "--yes")._2 should not include "deregistered orphan"
    t.fake.fanOut.consumerNames should contain("orphan")
  }

  test("given bad command lines, then each is refused saying what is wrong") {
    def refusal(args: String*) = intercept[IllegalArgumentException](ConsumersCli.parse(args)).getMessage
    refusal("remove", "--stream", "s") shouldBe "the first argument must be list or prune, not 'remove'"
    refusal("list") should include("--stream is required")
    refusal("prune", "--stream", "s", "--older-than", "soon") should include(
      "Invalid value 'soon' for --older-than: it is not a duration")
    refusal("list", "--stream", "s", "--yes") should include("--yes goes with prune")
    refusal("list", "--stream", "s", "--option", "region=us-east-1") should include("only kinesis.* options")
    refusal("list", "--stream", "s", "--option", "kinesis.region") should include("--option takes KEY=VALUE")
    val hadoop = ConsumersCli.parse(Seq("list", "--stream", "s", "--option", "spark.hadoop.fs.s3a.endpoint=http://x:1"))
    hadoop.hadoop shouldBe Map("fs.s3a.endpoint" -> "http://x:1")
  }
}
