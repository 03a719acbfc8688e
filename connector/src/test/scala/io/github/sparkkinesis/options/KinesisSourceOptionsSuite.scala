package io.github.sparkkinesis.options

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.offsets.{ShardPosition, StartingPosition}

class KinesisSourceOptionsSuite extends AnyFunSuite with Matchers {

  private val minimal = Map("kinesis.streamName" -> "orders")

  private def failure(options: Map[String, String]): String =
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(options)).getMessage

  test("given only a stream name, when parsed, then every option takes its registry default") {
    val parsed = KinesisSourceOptions.parse(minimal)
    parsed.streams shouldBe Seq("orders")
    parsed.startingPosition shouldBe StartingPosition.Latest
    parsed.failOnDataLoss shouldBe true
    parsed.maxFetchRecordsPerShard shouldBe 100000L
    parsed.maxFetchTimePerShardMs shouldBe 10000L
    parsed.describeShardIntervalMs shouldBe 1000L
    parsed.recordsPerFetch shouldBe 10000
    parsed.fetchIntervalMs shouldBe 500L
    parsed.idleShardCheckIntervalMs shouldBe 1000L
    parsed.maxRecordsPerTrigger shouldBe None
    parsed.driverRetryTimeoutMs shouldBe 120000L
    parsed.client.retry.numRetries shouldBe 3
    parsed.client.credentials shouldBe None
    parsed.client.region shouldBe None
    parsed.dropMisroutedRecords shouldBe false
  }

  test("given the polling and limit options, when parsed, then durations and caps come through") {
    val parsed = KinesisSourceOptions.parse(minimal ++ Map(
      "kinesis.idleShardCheckInterval" -> "250ms",
      "kinesis.maxRecordsPerTrigger" -> "5000",
      "kinesis.driverRetryTimeout" -> "30s"))
    (parsed.idleShardCheckIntervalMs, parsed.maxRecordsPerTrigger, parsed.driverRetryTimeoutMs) shouldBe
      ((250L, Some(5000L), 30000L))
    failure(minimal + ("kinesis.maxRecordsPerTrigger" -> "0")) should include("kinesis.maxRecordsPerTrigger")
    val bytes = KinesisSourceOptions.parse(minimal ++ Map(
      "kinesis.maxBytesPerTrigger" -> "104857600",
      "kinesis.getRecords.maxBytesPerSecondPerShard" -> "1048576"))
    (bytes.maxBytesPerTrigger, bytes.maxBytesPerSecondPerShard) shouldBe ((Some(104857600L), Some(1048576L)))
    (parsed.maxBytesPerTrigger, parsed.maxBytesPerSecondPerShard) shouldBe ((None, None))
    failure(minimal + ("kinesis.maxBytesPerTrigger" -> "100m")) shouldBe "Invalid value '100m' for option " +
      "kinesis.maxBytesPerTrigger: it is not a whole number. Accepted: a whole number of bytes from 1 to " +
      "9223372036854775807."
    failure(minimal + ("kinesis.getRecords.maxBytesPerSecondPerShard" -> "2")) shouldBe "Invalid value '2' for " +
      "option kinesis.getRecords.maxBytesPerSecondPerShard: it is outside 1024..2097152. Accepted: a whole number " +
      "of bytes per second from 1024 to 2097152."
    failure(minimal + ("kinesis.idleShardCheckInterval" -> "2h")) should include("longer than 1h")
  }

  test("given option names in any case, when parsed, then they are recognised") {
    val parsed =
      KinesisSourceOptions.parse(Map("KINESIS.STREAMNAME" -> "s", "kinesis.startingposition" -> "trim_horizon"))
    parsed.streams shouldBe Seq("s")
    parsed.startingPosition shouldBe StartingPosition.TrimHorizon
  }

  test("given no stream name, when parsed, then the message names the option and shows how to set it") {
    failure(Map.empty) should include("kinesis.streamName is required")
  }

  test("given a bad number, when parsed, then the message names the option, echoes the value and the range") {
    val message = failure(minimal + ("kinesis.maxFetchRecordsPerShard" -> "abc"))
    message should include("kinesis.maxFetchRecordsPerShard")
    message should include("'abc'")
    message should include("from 1 to 100000000")
  }

  test("given a value outside its range, when parsed, then it is refused") {
    failure(minimal + ("kinesis.getRecords.numberOfRecordsPerFetch" -> "10001")) should include("outside 1..10000")
  }

  test("given a retry maximum below the base interval, when parsed, then the message names both options") {
    failure(minimal + ("kinesis.clientMaxRetryIntervalMs" -> "100")) shouldBe
      "Option kinesis.clientMaxRetryInterval (100ms) is smaller than kinesis.clientRetryInterval (500ms): make " +
      "the maximum at least the base interval."
  }

  test("given a duration with more digits than a long holds, when parsed, then it is longer than the maximum") {
    failure(minimal + ("kinesis.describeShardInterval" -> "99999999999999999999")) should startWith(
      "Invalid value '99999999999999999999' for option kinesis.describeShardInterval: it is longer than 1h.")
  }

  test("given a misspelt kinesis option, when parsed, then the closest real option is suggested") {
    failure(minimal + ("kinesis.stratingPosition" -> "LATEST")) should include("Did you mean kinesis.startingPosition")
  }

  test("given options that are not the connector's, when parsed, then they are ignored") {
    KinesisSourceOptions.parse(minimal + ("path" -> "x") + ("maxFilesPerTrigger" -> "3")).streams shouldBe Seq("orders")
  }

  test("given an unknown consumer type, when parsed, then it is refused naming the option and the accepted values") {
    val message = failure(minimal + ("kinesis.consumerType" -> "Push"))
    message should include("kinesis.consumerType")
    message should include("SubscribeToShard")
  }

  test("given an AWS endpoint and no region, when parsed, then the region is read from the endpoint's host") {
    KinesisSourceOptions.parse(minimal + ("kinesis.endpointUrl" -> "https://kinesis.eu-west-3.amazonaws.com"))
      .client.region shouldBe Some("eu-west-3")
    KinesisSourceOptions.parse(minimal + ("kinesis.endpointUrl" -> "https://kinesis-fips.us-gov-west-1.amazonaws.com"))
      .client.region shouldBe Some("us-gov-west-1")
    KinesisSourceOptions.parse(minimal + ("kinesis.endpointUrl" -> "http://127.0.0.1:4568"))
      .client.region shouldBe None
  }

  test("given an explicit region, when parsed, then it wins over the endpoint's") {
    KinesisSourceOptions.parse(minimal ++ Map(
      "kinesis.endpointUrl" -> "https://kinesis.eu-west-3.amazonaws.com",
      "kinesis.region" -> "us-east-1"))
      .client.region shouldBe Some("us-east-1")
  }

  test("given a malformed endpoint or region, when parsed, then the message says what is accepted") {
    failure(minimal + ("kinesis.endpointUrl" -> "127.0.0.1:4568")) should include("http:// or https://")
    failure(minimal + ("kinesis.region" -> "Mars")) should include("AWS region name")
  }

  test("given only half of the static credentials, when parsed, then the message says they go together") {
    failure(minimal + ("kinesis.awsAccessKeyId" -> "AKIA")) should include("go together")
    failure(minimal + ("kinesis.sessionToken" -> "tok")) should include("without")
  }

  test("given a bad secret value, when it is refused, then the message never echoes it") {
    val message = failure(minimal + ("kinesis.awsSecretKey" -> " ") + ("kinesis.awsAccessKeyId" -> "id"))
    message should include("<redacted>")
    KinesisSourceOptions.parse(minimal ++ Map("kinesis.awsAccessKeyId" -> "id", "kinesis.awsSecretKey" -> "s3cr3t"))
      .toString should not include "s3cr3t"
  }

  test("given each starting position form, when parsed, then it means what docs/options.md says") {
    def start(raw: String) = KinesisSourceOptions.parse(minimal + ("kinesis.startingPosition" -> raw)).startingPosition
    start("latest") shouldBe StartingPosition.Latest
    start("EARLIEST") shouldBe StartingPosition.TrimHorizon
    start("AT_TIMESTAMP 2024-05-01T12:00:00Z") shouldBe StartingPosition.AtTimestamp(1714564800000L)
    start("AT_TIMESTAMP 2024-05-01T14:00:00+02:00") shouldBe StartingPosition.AtTimestamp(1714564800000L)
    start("""{"shardId-000000000000":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"4955"},
            | "shardId-000000000001":{"iteratorType":"LATEST"},
            | "shardId-000000000002":{"iteratorType":"AT_TIMESTAMP","iteratorPosition":"1714564800000"}}"""
      .stripMargin) shouldBe
      StartingPosition.PerShard(Map(
        "shardId-000000000000" -> Some(ShardPosition.AfterSequenceNumber("4955")),
        "shardId-000000000001" -> None,
        "shardId-000000000002" -> Some(ShardPosition.AtTimestamp(1714564800000L))))
  }

  test("given a bad starting position, when parsed, then the message explains the accepted forms") {
    failure(minimal + ("kinesis.startingPosition" -> "yesterday")) should include("AT_TIMESTAMP <ISO-8601 instant>")
    failure(minimal + ("kinesis.startingPosition" -> "AT_TIMESTAMP noon")) should include("not an ISO-8601 instant")
    val badSequence = """{"s":{"iteratorType":"AT_SEQUENCE_NUMBER","iteratorPosition":"x"}}"""
    failure(minimal + ("kinesis.startingPosition" -> badSequence)) should include("not a sequence number")
  }

  test("given the registry, then every option has a description, an accepted-values text and a default that " +
    "reads back as itself") {
    KinesisOptionsRegistry.all.map(_.key).distinct.size shouldBe KinesisOptionsRegistry.all.size
    KinesisOptionsRegistry.all.foreach { spec =>
      spec.description should not be empty
      spec.accepted should not be empty
      spec.defaultText.map(spec.parseOrFail) shouldBe spec.default
    }
  }

  test("given one stream by name and by ARN, when parsed, then the message names both spellings") {
    val failure = intercept[IllegalArgumentException](KinesisSourceOptions.parse(Map(
      "kinesis.streamName" -> "orders",
      "kinesis.streamARN" -> "arn:aws:kinesis:us-east-1:123456789012:stream/orders")))
    failure.getMessage should (include("stream name orders is given 2 times") and
      include("arn:aws:kinesis:us-east-1:123456789012:stream/orders"))
  }
}
