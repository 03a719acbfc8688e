package io.github.sparkkinesis.options

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.KinesisSourceProvider
import io.github.sparkkinesis.compat.JavaCollections._
import io.github.sparkkinesis.offsets.Json
import org.apache.spark.sql.util.CaseInsensitiveStringMap

class OptionChecksSuite extends AnyFunSuite with Matchers {
  import KinesisOptionsRegistry._

  private def source(options: (String, String)*): String = intercept[IllegalArgumentException](
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s") ++ options)).getMessage

  private val registry = KinesisOptionsRegistry.all

  test("given the registry, then each option's type name, accepted values and shown default are its parser's") {
    (NumberOfRecordsPerFetch.typeName, NumberOfRecordsPerFetch.accepted) shouldBe
      (("int", "a whole number from 1 to 10000"))
    (ConsumerType.typeName, ConsumerType.accepted) shouldBe (("enum", "GetRecords, SubscribeToShard or EFO (any case)"))
    (StartingPositionOption.typeName, StartingPositionOption.defaultText) shouldBe (("position", Some("LATEST")))
    (MaxFetchTimePerShard.typeName, MaxFetchTimePerShard.defaultText) shouldBe (("duration", Some("10s")))
    MaxFetchTimePerShard.accepted shouldBe
      "a duration such as 500ms, 10s or 5m (a bare number is seconds), from 1s to 1h"
    SinkMaxPendingBytesPerExecutor.accepted shouldBe "a whole number of bytes from 1048576 to 68719476736"
    registry.foreach(spec => spec.defaultText.foreach(text => spec.parseOrFail(text) shouldBe spec.default.get))
  }

  test("given a parser, when it refuses a value, then it says why") {
    NumberOfRecordsPerFetch.parse("10001") shouldBe Left("it is outside 1..10000")
    NumberOfRecordsPerFetch.parse("1.5") shouldBe Left("it is not a whole number")
    FailOnDataLoss.parse("yes") shouldBe Left("it is not a boolean")
    DescribeShardInterval.parse("1w") shouldBe Left("it is not a duration")
    MaxFetchTimePerShard.parse("500ms") shouldBe Left("it is shorter than 1s")
    ConsumerType.parse("push") shouldBe Left("it is not one of the accepted values")
    EndpointUrl.parse("localhost:4566") shouldBe Left("it does not start with http:// or https://")
  }

  test("given numbers of any size, when parsed, then those outside the range say so and only ASCII digits count") {
    source("kinesis.maxFetchRecordsPerShard" -> "99999999999999999999") should include("it is outside 1..100000000")
    source("kinesis.maxFetchRecordsPerShard" -> "\u0661\u0662") should include("it is not a whole number")
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s", "kinesis.maxFetchRecordsPerShard" -> " +12 "))
      .maxFetchRecordsPerShard shouldBe 12L
  }

  test("given durations in each unit and any case, when parsed, then they are milliseconds up to the maximum") {
    Seq("250" -> 250L, "250ms" -> 250L, "2 S" -> 2000L, "3min" -> 180000L, "1m" -> 60000L, "1H" -> 3600000L)
      .foreach { case (raw, ms) => DescribeShardInterval.parse(raw) shouldBe Right(ms) }
    DescribeShardInterval.parse("61m") shouldBe Left("it is longer than 1h")
    DescribeShardInterval.parse("1d") shouldBe Left("it is longer than 1h")
    SinkRecordTtl.parse("2d") shouldBe Right(172800000L)
  }

  test("given every time option, when given a duration, then it is read in milliseconds, and a bare number under " +
    "the new or the earlier name counts in the option's first unit") {
    def parse(options: (String, String)*) = KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s") ++ options)
    parse("kinesis.maxFetchTimePerShard" -> "2500ms").maxFetchTimePerShardMs shouldBe 2500L
    parse("kinesis.maxFetchTimePerShard" -> "5").maxFetchTimePerShardMs shouldBe 5000L
    parse("kinesis.maxFetchTimePerShardSec" -> "5").maxFetchTimePerShardMs shouldBe 5000L
    parse("kinesis.maxFetchTimePerShardSec" -> "2m").maxFetchTimePerShardMs shouldBe 120000L
    parse("kinesis.getRecords.fetchInterval" -> "1s").fetchIntervalMs shouldBe 1000L
    parse("kinesis.getRecords.fetchIntervalMs" -> "250").fetchIntervalMs shouldBe 250L
    val retry = parse("kinesis.clientRetryInterval" -> "1s", "kinesis.clientMaxRetryIntervalMs" -> "30000").client.retry
    (retry.baseDelayMs, retry.maxDelayMs) shouldBe ((1000L, 30000L))
    val efo = parse(
      "kinesis.consumerType" -> "EFO",
      "kinesis.consumerName" -> "q",
      "kinesis.subscribeToShard.timeoutSec" -> "30").fanOut.get
    efo.subscribeTimeoutMs shouldBe 30000L
    parse("kinesis.consumerType" -> "EFO", "kinesis.consumerName" -> "q", "kinesis.subscribeToShard.timeout" -> "2m")
      .fanOut.get.subscribeTimeoutMs shouldBe 120000L
    val sink =
      KinesisSinkOptions.parse(Map("kinesis.sink.recordMaxBufferedTime" -> "1s", "kinesis.sink.recordTtl" -> "1m"))
    (sink.recordMaxBufferedTimeMs, sink.recordTtlMs) shouldBe ((1000L, 60000L))
    KinesisSinkOptions.parse(Map("kinesis.sink.recordMaxBufferedTimeMs" -> "250")).recordMaxBufferedTimeMs shouldBe 250L
  }

  test("given an endpoint with the right prefix, when the rest is not a URL, then the connector alone refuses it") {
    source("kinesis.endpointUrl" -> "http://my_host:4566") should include("it names no host")
    source("kinesis.endpointUrl" -> "http://local host") should include("it is not a URL")
  }

  test("given the rules across options, when one is broken, then the first broken rule's message is the failure") {
    source("kinesis.awsSecretKey" -> "x") should include("go together")
    source("kinesis.sessionToken" -> "t", "kinesis.awsAccessKeyId" -> "a") should include("go together")
    source("kinesis.sessionToken" -> "t") should include("is set without")
    source("kinesis.clientRetryIntervalsMs" -> "20000") shouldBe "Option kinesis.clientMaxRetryInterval (10s) is " +
      "smaller than kinesis.clientRetryInterval (20s): make the maximum at least the base interval."
  }

  test("given a sink, when no stream is named, then the source's required-stream rule does not apply") {
    KinesisSinkOptions.parse(Map("kinesis.region" -> "us-east-1")).stream shouldBe None
  }

  test("given the JSON description, when read, then it holds only pure data besides names and docs: enum " +
    "members, whole-number ranges and every alias name") {
    val json = Json.read(OptionsDocs.json, "options")
    json.get("version").asInt shouldBe 3
    val options = json.get("options")
    def data(spec: OptionSpec[_]) =
      (0 until options.size).map(options.get).find(_.get("name").asText == spec.name).get.get("data")
    (data(NumberOfRecordsPerFetch).get("min").asLong, data(NumberOfRecordsPerFetch).get("max").asLong) shouldBe
      ((1L, 10000L))
    data(NumberOfRecordsPerFetch).get("problem").asText shouldBe "it is outside 1..10000"
    (0 until data(ConsumerType).get("values").size).map(data(ConsumerType).get("values").get(_).asText) shouldBe
      Seq("GetRecords", "SubscribeToShard", "EFO")
    Seq(StreamName, EndpointUrl, StartingPositionOption, DescribeShardInterval).foreach(data(_).size shouldBe 0)
    val aliases = json.get("aliases")
    (0 until aliases.size).map(aliases.get(_).asText) should contain allOf (
      "kinesis.kinesisRegion",
      "streamName",
      "kinesis.getRecords.fetchIntervalMs")
  }

  private val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000"

  /** What `spark.readStream.format("aws-kinesis").options(...).load()` runs: the provider's schema inference. */
  private def load(options: (String, String)*): Unit = new KinesisSourceProvider().inferSchema(
    new CaseInsensitiveStringMap((Map("kinesis.streamName" -> "s") ++ options).asJava))

  test("given enhanced fan-out without a consumer, when the DataFrame is loaded, then the message names the three " +
    "options, echoes the consumer type as given and says what to set") {
    val e = intercept[IllegalArgumentException](load("kinesis.consumerType" -> " efo "))
    e.getMessage shouldBe "Option kinesis.consumerType is 'efo', enhanced fan-out, which reads through a stream " +
      "consumer, but none is named: set option kinesis.consumerName to a name for the consumer this query registers " +
      "and manages, for example .option(\"kinesis.consumerName\", \"my-query\"), or option kinesis.consumerArn to " +
      "the ARN of an existing consumer (or set kinesis.consumerType to GetRecords to poll)."
    source("kinesis.consumerType" -> "SubscribeToShard") should include("'SubscribeToShard'")
  }

  test("given enhanced fan-out with both a consumer name and an ARN, when loaded, then both values are echoed") {
    val e = intercept[IllegalArgumentException](
      load("kinesis.consumerType" -> "SubscribeToShard", "kinesis.consumerName" -> "q", "kinesis.consumerArn" -> arn))
    e.getMessage shouldBe s"Options kinesis.consumerName ('q') and kinesis.consumerArn ('$arn') are both set, but " +
      "kinesis.consumerType 'SubscribeToShard' reads through one consumer: set kinesis.consumerName for a consumer " +
      "the query manages, or kinesis.consumerArn for an existing consumer it only reads through, not both."
  }

  test("given exactly one consumer with enhanced fan-out, or polling with any, when parsed, then they are accepted") {
    KinesisSourceOptions.parse(Map(
      "kinesis.streamName" -> "s",
      "kinesis.consumerType" -> "EFO",
      "kinesis.consumerName" -> "q")).fanOut.flatMap(_.consumerName) shouldBe Some("q")
    KinesisSourceOptions.parse(Map(
      "kinesis.streamName" -> "s",
      "kinesis.consumerType" -> "efo",
      "kinesis.consumerArn" -> arn)).fanOut.flatMap(_.consumerArn) shouldBe Some(arn)
    // Polling reads through no consumer: options kept for a later run on enhanced fan-out are no concern of it.
    KinesisSourceOptions.parse(Map(
      "kinesis.streamName" -> "s",
      "kinesis.consumerName" -> "q",
      "kinesis.consumerArn" -> arn)).fanOut shouldBe None
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s")).fanOut shouldBe None
  }

  test("given a oneWhen rule, when broken, then its options' text is echoed literally, other braces stay, and " +
    "it never names a secret") {
    val rule = OptionRule.OneWhen(
      ConsumerType,
      Seq("EFO"),
      Seq(ConsumerName),
      OptionUsage.Source,
      "{kinesis.consumerType} {kinesis.region} {}",
      "several")
    rule.violation(_ => false, _ => 0L, _ => Some("GetRecords")) shouldBe None
    OptionRule.OneWhen(
      ConsumerType,
      Seq("x$1\\"),
      Seq(ConsumerName),
      OptionUsage.Source,
      "<{kinesis.consumerType}>",
      "several").violation(_ => false, _ => 0L, _ => Some("X$1\\")) shouldBe Some("<X$1\\>") // echoed literally
    rule.violation(_ => false, _ => 0L, _ => Some("efo")) shouldBe Some("efo {kinesis.region} {}")
    rule.violation(_ => true, _ => 0L, _ => Some("efo")) shouldBe None
    intercept[IllegalArgumentException](OptionRule.OneWhen(
      ConsumerType,
      Seq("EFO"),
      Seq(AwsSecretKey),
      OptionUsage.Source,
      "m",
      "s")).getMessage should include("secret")
  }
}
