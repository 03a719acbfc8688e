package io.github.sparkkinesis.options

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.offsets.Json

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
      Seq("required", "together", "needs", "notBelow", "needs", "needs", "needs", "needs", "excludes")
    jsonRules.get(0).get("usage").asText shouldBe "source"
  }
}
