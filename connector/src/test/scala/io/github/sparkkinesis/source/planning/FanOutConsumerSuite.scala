package io.github.sparkkinesis.source.planning

import java.nio.file.{Files, Paths}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.concurrent.Eventually.eventually
import org.scalatest.concurrent.PatienceConfiguration.Timeout
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import org.scalatest.time.{Seconds, Span}

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.metadata.AtomicFiles
import io.github.sparkkinesis.options.{FanOutOptions, KinesisSourceOptions}

class FanOutConsumerSuite extends AnyFunSuite with Matchers {

  /** Stream `stream` (a name, or an ARN of any account) in a fake of its own, read by a query of `checkpoint`. */
  private final class Setup(
      activationMillis: Long = 0L,
      stream: String = "s",
      val clock: ManualClock = new ManualClock(),
      val checkpoint: String = Files.createTempDirectory("checkpoint").toString) {
    val fake = new FakeKinesisClient(clock)
    fake.createStream(stream, 1)
    fake.fanOut.activationMillis = activationMillis

    def consumer(options: FanOutOptions, checkpointDir: String = checkpoint): FanOutConsumer =
      new FanOutConsumer(
        fake,
        stream,
        options,
        new Path(checkpointDir),
        new Configuration(),
        60000L,
        clock,
        ms => clock.advance(ms))
  }

  private def managed(name: String = "q", deregister: Boolean = true) =
    FanOutOptions(Some(name), None, deregister, 60000L, 3)

  test(
    "given no consumer, when the query starts, then it registers one, waits until ACTIVE, and deregisters it on stop") {
    val t = new Setup(activationMillis = 3000L)
    val c = t.consumer(managed())
    val arn = c.arn
    t.fake.describeConsumerByArn(arn).get.isActive shouldBe true
    t.fake.callsOf("DescribeStreamConsumer") should be > 2 // it polled while CREATING
    c.stop()
    t.fake.fanOut.consumerNames shouldBe empty
  }

  test("given the consumer resolved in the background from the query's start, when the query stops at once, then " +
    "no consumer is left registered, and in a run that goes on a batch's request finds it resolved") {
    val t = new Setup(activationMillis = 3000L)
    val stopped = t.consumer(managed())
    stopped.resolveInBackground()
    stopped.stop()
    t.fake.fanOut.consumerNames shouldBe empty // registered and deregistered, or stopped before registering
    val registered = t.fake.callsOf("RegisterStreamConsumer")
    registered should be <= 1
    val running = t.consumer(managed())
    running.resolveInBackground()
    running.arn shouldBe t.fake.describeConsumer(t.fake.streamArn("s"), "q").get.arn
    t.fake.callsOf("RegisterStreamConsumer") shouldBe registered + 1 // once, whichever of the two asked first
    running.stop()
  }

  test("given a consumer this run registered that never became ACTIVE, when the query stops, then it is deregistered") {
    val t = new Setup(activationMillis = 10 * 60 * 1000L)
    val c = t.consumer(managed())
    c.resolveInBackground()
    c.stop()
    t.fake.fanOut.consumerNames shouldBe empty
  }

  test("given resolving the consumer in the background fails, then the driver's next planning fails with that " +
    "error, and a batch asking for the consumer gets it without waiting again") {
    val t = new Setup()
    val missing = t.fake.streamArn("s") + "/consumer/gone:1"
    val c = t.consumer(FanOutOptions(None, Some(missing), deregisterOnStop = true, 60000L, 3))
    c.resolveInBackground()
    val error = eventually(Timeout(Span(10, Seconds))) {
      intercept[KinesisClientException](c.checkResolution())
    }
    error.getMessage should include(missing)
    error.getMessage should include("kinesis.consumerArn")
    val describes = t.fake.callsOf("DescribeStreamConsumer")
    intercept[KinesisClientException](c.arn) shouldBe theSameInstanceAs(error)
    t.fake.callsOf("DescribeStreamConsumer") shouldBe describes
    c.stop()
  }

  test(
    "given a consumer that existed before the query, when the query stops, then it is reused and never deregistered") {
    val t = new Setup()
    val theirs = t.fake.registerConsumer(t.fake.streamArn("s"), "q")
    val c = t.consumer(managed())
    c.arn shouldBe theirs.arn
    c.stop()
    t.fake.fanOut.consumerNames shouldBe Seq("q")
    t.fake.callsOf("RegisterStreamConsumer") shouldBe 1
  }

  test("given a consumer this query registered before a crash, when it restarts and stops, then it deregisters it") {
    val t = new Setup()
    val arn = t.consumer(managed()).arn // the first run dies without stop()
    val restarted = t.consumer(managed())
    restarted.arn shouldBe arn
    t.fake.callsOf("RegisterStreamConsumer") shouldBe 1
    restarted.stop()
    t.fake.fanOut.consumerNames shouldBe empty
  }

  test("given a registration that took effect but whose answer was lost (the SDK's retry refused: ResourceInUse), " +
    "when the query starts and stops, then it owns the consumer and deregisters it, with or without its tags kept") {
    Seq(false, true).foreach { tagsDropped =>
      val t = new Setup()
      t.fake.fanOut.dropsRegistrationTags = tagsDropped // kinesis-mock drops them: then the creation time decides
      t.fake.fanOut.registrationAnswersLost = 1
      val c = t.consumer(managed())
      c.arn should include("consumer/q:")
      c.stop()
      withClue(s"tags dropped: $tagsDropped")(t.fake.fanOut.consumerNames shouldBe empty)
    }
  }

  test("given a consumer someone else registered between the query's look and its registration (tagged with their " +
    "checkpoint), when the query stops, then it leaves it") {
    val t = new Setup()
    val theirCheckpoint = Files.createTempDirectory("theirs").toUri.toString
    t.fake.failNextCalls("RegisterStreamConsumer", 1) {
      val theirs = t.fake.fanOut.registerOnAnyStream(t.fake.streamArn("s"), "q")
      t.fake.tagConsumer(theirs.arn, ConsumerTags.ofCheckpoint(theirCheckpoint))
      new KinesisClientException("RegisterStreamConsumer: consumer q exists already (ResourceInUseException)")
    }
    val c = t.consumer(managed())
    c.arn should include("consumer/q:")
    c.stop()
    t.fake.fanOut.consumerNames shouldBe Seq("q")
  }

  test("given deregisterConsumerOnStop false, when the query stops, then the consumer stays for the next run") {
    val t = new Setup()
    val c = t.consumer(managed(deregister = false))
    c.arn
    c.stop()
    t.fake.fanOut.consumerNames shouldBe Seq("q")
  }

  test("given another query's checkpoint, when it stops, then it leaves the consumer the first query registered") {
    val t = new Setup()
    val first = t.consumer(managed())
    first.arn
    val second = t.consumer(managed(), Files.createTempDirectory("other").toString)
    second.arn shouldBe first.arn
    second.stop()
    t.fake.fanOut.consumerNames shouldBe Seq("q")
  }

  test("given a checkpoint that registered consumer q1, when the query restarts with consumerName q2, then it " +
    "registers q2, and on stop deregisters q2 only: q1 stays for whoever may read through it") {
    val t = new Setup()
    val q1 = t.consumer(managed("q1")).arn // the first run dies without stop()
    val restarted = t.consumer(managed("q2"))
    restarted.arn should (include("consumer/q2:") and not be q1)
    t.fake.fanOut.consumerNames.sorted shouldBe Seq("q1", "q2")
    restarted.stop()
    t.fake.fanOut.consumerNames shouldBe Seq("q1")
  }

  test("given a checkpoint that registered consumer q1, when the query restarts with an existing consumer q2, then " +
    "on stop it deregisters neither: q2 is someone else's, q1 is no longer the one it reads through") {
    val t = new Setup()
    t.consumer(managed("q1")).arn
    val theirs = t.fake.registerConsumer(t.fake.streamArn("s"), "q2")
    val restarted = t.consumer(managed("q2"))
    restarted.arn shouldBe theirs.arn
    restarted.stop()
    t.fake.fanOut.consumerNames.sorted shouldBe Seq("q1", "q2")
  }

  /** Streams "s" of two accounts, named by ARN, read by one query (one checkpoint). */
  private def sameNameInTwoAccounts(): Seq[Setup] = {
    val first = new Setup(stream = FakeFanOut.streamArn("s", "111111111111"))
    Seq(
      first,
      new Setup(stream = FakeFanOut.streamArn("s", "222222222222"), clock = first.clock, checkpoint = first.checkpoint))
  }

  test("given two streams of one name in two accounts, named by ARN, when one query registers a consumer for each, " +
    "then its checkpoint records each apart and the query deregisters both on stop") {
    val setups = sameNameInTwoAccounts()
    val consumers = setups.map(_.consumer(managed()))
    consumers.map(_.arn).distinct should have size 2
    consumers.foreach(_.stop())
    setups.map(_.fake.fanOut.consumerNames) shouldBe Seq(Nil, Nil)
  }

  test("given a checkpoint of a release that recorded a consumer under the stream's name alone, when the query reads " +
    "a stream named by ARN and stops, then it deregisters that consumer only for the stream it belongs to") {
    val Seq(ours, theirs) = sameNameInTwoAccounts()
    val registered = ours.consumer(managed(deregister = false)).arn
    val legacy = new Path(ours.checkpoint, "efo-consumer-s")
    AtomicFiles.publishIfAbsent(legacy, registered, new Configuration())
    Files.delete(Paths.get(ours.checkpoint, ConsumerRecords.ownerFileName(FakeFanOut.streamArn("s", "111111111111"))))
    theirs.consumer(managed()).stop() // registers and deregisters its own; the legacy record is not its own
    ours.fake.fanOut.consumerNames shouldBe Seq("q")
    val resumed = ours.consumer(managed())
    resumed.arn shouldBe registered
    resumed.stop()
    ours.fake.fanOut.consumerNames shouldBe empty
    Files.exists(Paths.get(ours.checkpoint, "efo-consumer-s")) shouldBe false
  }

  test("given throttled RegisterStreamConsumer calls, when the query starts, then it retries with back-off") {
    val t = new Setup()
    t.fake.failNextCalls("RegisterStreamConsumer", 3)(new ThrottledException("LimitExceeded (injected)"))
    t.consumer(managed()).arn should include("consumer/q:")
    t.fake.callsOf("RegisterStreamConsumer") shouldBe 4
  }

  test("given describe calls failing with a passing connection error, when the query starts, then it retries them") {
    val t = new Setup()
    val passing = new KinesisClientException("Unable to execute HTTP request: Acquire operation took longer (injected)")
    t.fake.failNextCalls("DescribeStreamSummary", 2)(passing)
    t.fake.failNextCalls("DescribeStreamConsumer", 2)(passing)
    t.consumer(managed()).arn should include("consumer/q:")
    t.fake.callsOf("DescribeStreamSummary") should be >= 3
  }

  test("given refused credentials while describing, when the query starts, then it fails at once") {
    val t = new Setup()
    t.fake.failNextCalls("DescribeStreamSummary", 1)(new AccessException("not authorized (injected)"))
    intercept[AccessException](t.consumer(managed()).arn)
    t.fake.callsOf("DescribeStreamSummary") shouldBe 1
  }

  test("given a consumer ARN, when the query starts and stops, then it is used as is and never deregistered") {
    val t = new Setup()
    val arn = t.fake.registerConsumer(t.fake.streamArn("s"), "admin").arn
    val c = t.consumer(FanOutOptions(None, Some(arn), deregisterOnStop = true, 60000L, 3))
    c.arn shouldBe arn
    c.stop()
    t.fake.fanOut.consumerNames shouldBe Seq("admin")
    t.fake.callsOf("RegisterStreamConsumer") shouldBe 1
  }

  test("given kinesis.consumerArn of another account's stream of the same name, when a query naming its stream by " +
    "name alone starts, then it refuses, naming the option and both streams' ARNs, and reads nothing") {
    // Given stream s of the caller's account, and a consumer of stream s of account 210987654321
    val t = new Setup()
    val theirs = t.fake.fanOut.registerOnAnyStream(FakeFanOut.streamArn("s", "210987654321"), "theirs").arn

    // When
    val e = intercept[IllegalArgumentException](
      t.consumer(FanOutOptions(None, Some(theirs), deregisterOnStop = true, 60000L, 3)).arn)

    // Then
    e.getMessage shouldBe s"Option kinesis.consumerArn is '$theirs', a consumer of stream " +
      "arn:aws:kinesis:us-east-1:210987654321:stream/s, but the query reads stream " +
      "arn:aws:kinesis:us-east-1:123456789012:stream/s (given as 's'): a consumer serves only its own stream's " +
      "shards, and shard ids repeat across streams, so the query would read the other stream's records labelled as " +
      "stream 's'. Give the ARN of a consumer of stream 's' (aws kinesis list-stream-consumers --stream-arn " +
      "arn:aws:kinesis:us-east-1:123456789012:stream/s), or set kinesis.consumerName instead of kinesis.consumerArn " +
      "to let the connector register a consumer of that name on stream 's'."
    t.fake.callsOf("SubscribeToShard") shouldBe 0
  }

  test("given a consumer ARN that does not exist, when the query starts, then it fails naming the option") {
    val t = new Setup()
    val e = intercept[KinesisClientException] {
      t.consumer(FanOutOptions(None, Some(FakeFanOut.streamArn("s") + "/consumer/gone:1"), true, 60000L, 3)).arn
    }
    e.getMessage should include("kinesis.consumerArn")
  }

  test("given a consumer that stays CREATING, when the wait runs out, then the query fails saying so") {
    val t = new Setup(activationMillis = 10 * 60 * 1000L)
    val e = intercept[KinesisClientException](t.consumer(managed()).arn)
    e.getMessage should (include("CREATING") and include("kinesis.driverRetryTimeout"))
  }

  private val userTags = Map("team" -> "orders")

  test("given kinesis.consumerTags, when the query registers its consumer, then the consumer carries them and the " +
    "connector's tag naming the checkpoint, in the registration itself (AWS keeps them: no TagResource)") {
    val t = new Setup()
    t.consumer(managed().copy(tags = userTags)).arn
    val tags = t.fake.consumerTags(t.fake.describeConsumer(t.fake.streamArn("s"), "q").get.arn)
    tags("team") shouldBe "orders"
    ConsumerTags.checkpointOf(tags) shouldBe Some(s"file:${t.checkpoint}")
    t.fake.callsOf("TagResource") shouldBe 0
  }

  test("given an endpoint that drops RegisterStreamConsumer's tags (kinesis-mock), when the query registers its " +
    "consumer, then it adds them with TagResource") {
    val t = new Setup()
    t.fake.fanOut.dropsRegistrationTags = true
    val arn = t.consumer(managed().copy(tags = userTags)).arn
    t.fake.consumerTags(arn) shouldBe userTags ++ ConsumerTags.ofCheckpoint(s"file:${t.checkpoint}")
    t.fake.callsOf("TagResource") shouldBe 1
  }

  test("given an endpoint that drops RegisterStreamConsumer's tags and refuses TagResource's, when the query " +
    "registers its consumer, then it tries once, warns and reads: the query's start does not wait on tags") {
    val t = new Setup()
    t.fake.fanOut.dropsRegistrationTags = true
    t.fake.failNextCalls("TagResource", 1000)(new KinesisClientException("Values contain invalid characters"))
    t.consumer(managed().copy(tags = userTags)).arn should not be empty
    t.fake.callsOf("TagResource") shouldBe 1
  }

  test("given credentials without kinesis:TagResource, when the query registers its consumer, then without user " +
    "tags it registers it untagged and reads, and with kinesis.consumerTags it fails naming the option and the " +
    "permission") {
    val untagged = new Setup()
    untagged.fake.fanOut.mayTag = false
    val arn = untagged.consumer(managed()).arn
    untagged.fake.describeConsumerByArn(arn).get.isActive shouldBe true
    untagged.fake.consumerTags(arn) shouldBe empty

    val tagged = new Setup()
    tagged.fake.fanOut.mayTag = false
    val message = intercept[AccessException](tagged.consumer(managed().copy(tags = userTags)).arn).getMessage
    message should include("with tags (option kinesis.consumerTags) was refused: tagging needs the " +
      "kinesis:TagResource permission")
    tagged.fake.fanOut.consumerNames shouldBe empty
  }

  private val base = Map("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1")

  test(
    "given consumerType EFO in any case with a name, when options are parsed, then fan-out is on with the defaults") {
    val parsed = KinesisSourceOptions.parse(base ++ Map("kinesis.consumerType" -> "efo", "kinesis.consumerName" -> "q"))
    parsed.fanOut shouldBe Some(FanOutOptions(Some("q"), None, deregisterOnStop = true, 20000L, 10))
    KinesisSourceOptions.parse(base ++ Map(
      "kinesis.consumerType" -> "SubscribeToShard",
      "kinesis.consumerName" -> "q",
      "kinesis.subscribeToShard.timeoutSec" -> "5",
      "kinesis.subscribeToShard.maxRetries" -> "0",
      "kinesis.deregisterConsumerOnStop" -> "false")).fanOut shouldBe Some(FanOutOptions(
      Some("q"),
      None,
      false,
      5000L,
      0))
    KinesisSourceOptions.parse(base).fanOut shouldBe None
  }

  test("given a bad consumer ARN, or a good one, when options are parsed, then the bad one is refused") {
    val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000"
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(base ++ Map(
      "kinesis.consumerType" -> "EFO",
      "kinesis.consumerArn" -> "arn:nope"))).getMessage should include("kinesis.consumerArn")
    KinesisSourceOptions.parse(base ++ Map("kinesis.consumerType" -> "EFO", "kinesis.consumerArn" -> arn))
      .fanOut.flatMap(_.consumerArn) shouldBe Some(arn)
  }

  test("given kinesis.consumerArn of a same-named stream of another account or region, when options are parsed, then " +
    "it is refused naming both streams' accounts and regions; the consumer of the stream read is accepted") {
    // Given stream shared of account 210987654321, named by ARN, and consumers of streams named shared
    val read = "arn:aws:kinesis:us-east-1:210987654321:stream/shared"
    val ownAccount = "arn:aws:kinesis:us-east-1:123456789012:stream/shared/consumer/c:1700000000"
    val otherRegion = "arn:aws:kinesis:eu-west-1:210987654321:stream/shared/consumer/c:1700000000"
    def parse(stream: (String, String), arn: String, more: (String, String)*) = KinesisSourceOptions.parse(
      Map(stream, "kinesis.consumerType" -> "EFO", "kinesis.consumerArn" -> arn) ++ more)

    // When / Then
    val byAccount = intercept[IllegalArgumentException](parse("kinesis.streamARN" -> read, ownAccount)).getMessage
    byAccount should include(s"Option kinesis.consumerArn is '$ownAccount', a consumer of stream 'shared' of " +
      "account 123456789012 in us-east-1, but the query reads stream 'shared' of account 210987654321 in us-east-1 " +
      "(option kinesis.streamARN)")
    byAccount should include("set kinesis.consumerName instead of kinesis.consumerArn")
    intercept[IllegalArgumentException](parse("kinesis.streamARN" -> read, otherRegion)).getMessage should include(
      "the query reads stream 'shared' of account 210987654321 in us-east-1 (option kinesis.streamARN)")
    intercept[IllegalArgumentException](parse(
      "kinesis.streamName" -> "shared",
      otherRegion,
      "kinesis.region" -> "us-east-1")).getMessage should include(
      "in eu-west-1, but the query reads stream 'shared' in us-east-1 (options kinesis.streamName and kinesis.region)")
    val sameStream = read + "/consumer/c:1700000000"
    parse("kinesis.streamARN" -> read, sameStream).fanOut.flatMap(_.consumerArn) shouldBe Some(sameStream)
    parse("kinesis.streamName" -> "shared", otherRegion).fanOut.flatMap(_.consumerArn) shouldBe Some(otherRegion)
  }
}
