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

  test("given the registry, when each option's check is described, then only the starting and ending positions " +
    "and the credentials provider class (loaded to be checked) are left out") {
    registry.filter(_.check == OptionCheck.ConnectorOnly).map(_.name) shouldBe
      Seq(StartingPositionOption.name, EndingPosition.name, CredentialProviderClass.name)
  }

  test("given a parser built from Parsers, when it refuses a value, then the reason is the one its check describes") {
    val whole = OptionCheck.Whole(1L, 10000L)
    NumberOfRecordsPerFetch.check shouldBe whole
    NumberOfRecordsPerFetch.parse("10001") shouldBe Left(whole.outside)
    NumberOfRecordsPerFetch.parse("1.5") shouldBe Left(whole.notWhole)
    FailOnDataLoss.parse("yes") shouldBe Left(OptionCheck.Bool.notOne)
    DescribeShardInterval.parse("1d") shouldBe Left(OptionCheck.Duration(3600000L, "1h").notDuration)
    ConsumerType.parse("subscribetoshard").left.map(_ should include("not supported"))
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
  }

  test("given an endpoint with the right prefix, when the rest is not a URL, then the connector alone refuses it") {
    source("kinesis.endpointUrl" -> "http://my_host:4566") should include("it names no host")
    source("kinesis.endpointUrl" -> "http://local host") should include("it is not a URL")
  }

  test("given the rules across options, when one is broken, then the first broken rule's message is the failure") {
    source("kinesis.awsSecretKey" -> "x") should include("go together")
    source("kinesis.sessionToken" -> "t", "kinesis.awsAccessKeyId" -> "a") should include("go together")
    source("kinesis.sessionToken" -> "t") should include("is set without")
    source("kinesis.clientRetryIntervalsMs" -> "20000") shouldBe "Option kinesis.clientMaxRetryIntervalMs (10000) is " +
      "smaller than kinesis.clientRetryIntervalsMs (20000): make the maximum at least the base interval."
  }

  test("given a sink, when no stream is named, then the source's required-stream rule does not apply") {
    KinesisSinkOptions.parse(Map("kinesis.region" -> "us-east-1")).stream shouldBe None
  }

  test("given the JSON description, when read, then every option has its check and every rule its options") {
    val json = Json.read(OptionsDocs.json, "options")
    json.get("version").asInt shouldBe 2
    val options = json.get("options")
    (0 until options.size).map(i => options.get(i).get("check").get("kind").asText) shouldBe registry.map(_.check.kind)
    val whole = (0 until options.size).map(options.get).find(_.get("name").asText == NumberOfRecordsPerFetch.name).get
    (whole.get("check").get("min").asLong, whole.get("check").get("max").asLong) shouldBe ((1L, 10000L))
    val jsonRules = json.get("rules")
    (0 until jsonRules.size).map(i => jsonRules.get(i).get("kind").asText) shouldBe
      Seq("required", "together", "needs", "notBelow", "needs", "needs", "needs", "needs", "excludes", "oneWhen")
    jsonRules.get(0).get("usage").asText shouldBe "source"
    val consumer = jsonRules.get(jsonRules.size - 1)
    (0 until consumer.get("options").size).map(consumer.get("options").get(_).asText) shouldBe
      Seq(ConsumerType.name, ConsumerName.name, ConsumerArn.name)
    (0 until consumer.get("values").size).map(consumer.get("values").get(_).asText) shouldBe FanOutConsumerTypes
    consumer.get("several").asText should include("not both")
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
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s", "kinesis.consumerType" -> "EFO",
      "kinesis.consumerName" -> "q")).fanOut.flatMap(_.consumerName) shouldBe Some("q")
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s", "kinesis.consumerType" -> "efo",
      "kinesis.consumerArn" -> arn)).fanOut.flatMap(_.consumerArn) shouldBe Some(arn)
    // Polling reads through no consumer: options kept for a later run on enhanced fan-out are no concern of it.
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s", "kinesis.consumerName" -> "q",
      "kinesis.consumerArn" -> arn)).fanOut shouldBe None
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "s")).fanOut shouldBe None
  }

  test("given a oneWhen rule, when broken, then its options' text is echoed literally, other braces stay, and " +
    "it never names a secret") {
    val rule = OptionRule.OneWhen(ConsumerType, Seq("EFO"), Seq(ConsumerName), OptionUsage.Source,
      "{kinesis.consumerType} {kinesis.region} {}", "several")
    rule.violation(_ => false, _ => 0L, _ => Some("GetRecords")) shouldBe None
    OptionRule.OneWhen(ConsumerType, Seq("x$1\\"), Seq(ConsumerName), OptionUsage.Source, "<{kinesis.consumerType}>",
      "several").violation(_ => false, _ => 0L, _ => Some("X$1\\")) shouldBe Some("<X$1\\>") // echoed literally
    rule.violation(_ => false, _ => 0L, _ => Some("efo")) shouldBe Some("efo {kinesis.region} {}")
    rule.violation(_ => true, _ => 0L, _ => Some("efo")) shouldBe None
    intercept[IllegalArgumentException](OptionRule.OneWhen(ConsumerType, Seq("EFO"), Seq(AwsSecretKey),
      OptionUsage.Source, "m", "s")).getMessage should include("secret")
  }
}
