package io.github.sparkkinesis.options

import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.offsets.{ShardPosition, StartingPosition}

class OptionAliasesSuite extends AnyFunSuite with Matchers {
  import AliasEffect._

  private def source(options: (String, String)*): KinesisSourceOptions = KinesisSourceOptions.parse(options.toMap)
  private def sink(options: (String, String)*): KinesisSinkOptions = KinesisSinkOptions.parse(options.toMap)
  private def warnings(options: (String, String)*): Seq[String] = AliasResolution.resolve(options.toMap).warnings
  private def failure(options: (String, String)*): String =
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(options.toMap)).getMessage

  test("given the alias table, then every target is an option of the registry") {
    val names = KinesisOptionsRegistry.all.map(_.name).toSet
    val targets = KinesisOptionsRegistry.aliases.map(_.effect).collect { case Sets(target, _, _) => target }
    targets.filterNot(names) shouldBe empty
  }

  test("given the alias table, then no alias is spelt like an option or another alias, in any case") {
    val keys = KinesisOptionsRegistry.aliases.map(_.key)
    keys.diff(keys.distinct) shouldBe empty
    keys.filter(k => KinesisOptionsRegistry.find(k).isDefined) shouldBe empty
  }

  test("given every name the issue lists, then each is an alias, an option or an awaited option") {
    val documented = Seq(
      // awslabs
      "kinesis.kinesisRegion",
      "kinesis.checkNewRecordThreads",
      "kinesis.minBatchesToRetain",
      "kinesis.metadataNumRetries",
      "kinesis.metadataRetryIntervalsMs",
      "kinesis.metadataMaxRetryIntervalMs",
      "kinesis.subscribeToShard.timeoutSec",
      "kinesis.subscribeToShard.maxRetries",
      // qubole / roncemer
      "streamName",
      "endpointUrl",
      "awsAccessKeyId",
      "awsSecretKey",
      "awsSTSRoleARN",
      "awsSTSSessionName",
      "awsUseInstanceProfile",
      "startingPosition",
      "failondataloss",
      "kinesis.executor.maxFetchTimeInMs",
      "kinesis.executor.maxFetchRecordsPerShard",
      "kinesis.executor.maxRecordPerRead",
      "kinesis.executor.addIdleTimeBetweenReads",
      "kinesis.executor.idleTimeBetweenReadsInMs",
      "kinesis.client.describeShardInterval",
      "kinesis.client.numRetries",
      "kinesis.client.retryIntervalMs",
      "kinesis.client.maxRetryIntervalMs",
      "kinesis.client.avoidEmptyBatches",
      "kinesis.executor.recordMaxBufferedTime",
      "kinesis.executor.maxConnections",
      "kinesis.executor.aggregationEnabled",
      "kinesis.executor.flushwaittimemillis",
      // Databricks
      "streamARN",
      "region",
      "endpoint",
      "initialPosition",
      "maxRecordsPerFetch",
      "maxFetchRate",
      "minFetchPeriod",
      "maxFetchDuration",
      "fetchBufferSize",
      "shardsPerTask",
      "shardFetchInterval",
      "consumerMode",
      "consumerName",
      "requireConsumerDeregistration",
      "awsAccessKey",
      "roleArn",
      "roleExternalId",
      "roleSessionName",
      "stsEndpoint")
    val known = (KinesisOptionsRegistry.aliases.map(_.name) ++
      KinesisOptionsRegistry.all.map(_.name)).map(_.toLowerCase).toSet
    documented.filterNot(n => known(n.toLowerCase)) shouldBe empty
  }

  test("given a qubole read, when parsed, then its spellings set our options, values converted") {
    val parsed = source(
      "streamName" -> "orders",
      "endpointUrl" -> "http://localhost:4567",
      "awsAccessKeyId" -> "id",
      "awsSecretKey" -> "secret",
      "startingposition" -> "trim_horizon",
      "failondataloss" -> "false",
      "kinesis.executor.maxFetchTimeInMs" -> "2500",
      "kinesis.executor.maxFetchRecordsPerShard" -> "500",
      "kinesis.executor.maxRecordPerRead" -> "100",
      "kinesis.executor.idleTimeBetweenReadsInMs" -> "300",
      "kinesis.client.describeShardInterval" -> "2s",
      "kinesis.client.numRetries" -> "7",
      "kinesis.client.retryIntervalMs" -> "200",
      "kinesis.client.maxRetryIntervalMs" -> "3000")
    parsed.streams shouldBe Seq("orders")
    parsed.client.endpointUrl.map(_.toString) shouldBe Some("http://localhost:4567")
    parsed.client.credentials.map(c => (c.accessKeyId, c.secretKey)) shouldBe Some(("id", "secret"))
    parsed.startingPosition shouldBe StartingPosition.TrimHorizon
    parsed.failOnDataLoss shouldBe false
    parsed.maxFetchTimePerShardMs shouldBe 3000L
    (parsed.maxFetchRecordsPerShard, parsed.recordsPerFetch, parsed.fetchIntervalMs) shouldBe ((500L, 100, 300L))
    parsed.describeShardIntervalMs shouldBe 2000L
    (parsed.client.retry.numRetries, parsed.client.retry.baseDelayMs, parsed.client.retry.maxDelayMs) shouldBe
      ((7, 200L, 3000L))
  }

  test(
    "given qubole's JSON map of shard to position (with its metadata entry), when parsed, then each shard starts " +
      "there") {
    val json = """{"metadata":{"streamName":"orders","batchId":"3"},""" +
      """"shardId-000000000000":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"4959"},""" +
      """"shardId-000000000001":{"iteratorType":"TRIM_HORIZON","iteratorPosition":""}}"""
    source("streamName" -> "orders", "startingPosition" -> json).startingPosition shouldBe StartingPosition.PerShard(
      Map(
        "shardId-000000000000" -> Some(ShardPosition.AfterSequenceNumber("4959")),
        "shardId-000000000001" -> Some(ShardPosition.TrimHorizon)))
  }

  test(
    "given qubole's fetch time in milliseconds that is not whole seconds, when resolved, then it is rounded up and " +
      "said") {
    source("streamName" -> "s", "kinesis.executor.maxFetchTimeInMs" -> "1500").maxFetchTimePerShardMs shouldBe 2000L
    warnings("kinesis.executor.maxFetchTimeInMs" -> "1500") shouldBe Seq(
      "Option kinesis.executor.maxFetchTimeInMs (qubole/roncemer) is read as kinesis.maxFetchTimePerShard: read as 2 " +
        "s.")
    warnings("kinesis.executor.maxFetchTimeInMs" -> "1000") shouldBe empty
  }

  test("given qubole's sink spellings, when parsed for a write, then they set the sink's options") {
    val parsed = sink(
      "streamName" -> "out",
      "endpointUrl" -> "https://localhost:4567",
      "kinesis.executor.recordMaxBufferedTime" -> "250",
      "kinesis.executor.maxConnections" -> "4",
      "kinesis.executor.aggregationEnabled" -> "false")
    (parsed.stream, parsed.recordMaxBufferedTimeMs, parsed.maxConnections, parsed.aggregationEnabled) shouldBe
      ((Some("out"), 250L, 4, false))
  }

  test("given a Databricks read, when parsed, then its spellings and value formats set our options") {
    val parsed = source(
      "streamName" -> "orders",
      "region" -> "eu-west-1",
      "endpoint" -> "kinesis.eu-west-1.amazonaws.com",
      "initialPosition" -> "earliest",
      "maxRecordsPerFetch" -> "500",
      "minFetchPeriod" -> "400ms",
      "maxFetchDuration" -> "10s",
      "shardFetchInterval" -> "2m",
      "consumerMode" -> "polling",
      "awsAccessKey" -> "id",
      "awsSecretKey" -> "secret")
    parsed.client.region shouldBe Some("eu-west-1")
    parsed.client.endpointUrl.map(_.toString) shouldBe Some("https://kinesis.eu-west-1.amazonaws.com")
    parsed.startingPosition shouldBe StartingPosition.TrimHorizon
    (parsed.recordsPerFetch, parsed.fetchIntervalMs, parsed.maxFetchTimePerShardMs) shouldBe ((500, 400L, 10000L))
    parsed.describeShardIntervalMs shouldBe 120000L
    parsed.client.credentials.map(_.accessKeyId) shouldBe Some("id")
  }

  test("given Databricks' comma-separated streamName and its streamARN, when parsed, then every stream is read") {
    source(
      "streamName" -> "a, b",
      "streamARN" -> "arn:aws:kinesis:us-east-1:123456789012:stream/c",
      "shardsPerTask" -> "2").streams shouldBe Seq("a", "b", "arn:aws:kinesis:us-east-1:123456789012:stream/c")
    source("streamName" -> "a", "shardsPerTask" -> "2").shardsPerTask shouldBe 2
  }

  test("given Databricks' at_timestamp JSON with and without a format, when parsed, then it starts at that instant") {
    val withFormat = """{"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}"""
    source("streamName" -> "s", "initialPosition" -> withFormat).startingPosition shouldBe
      StartingPosition.AtTimestamp(Instant.parse("2020-06-25T17:23:45Z").toEpochMilli)
    source("streamName" -> "s", "initialPosition" -> """{"at_timestamp": "2020-06-25T17:23:45Z"}""")
      .startingPosition shouldBe StartingPosition.AtTimestamp(Instant.parse("2020-06-25T17:23:45Z").toEpochMilli)
    failure(
      "streamName" -> "s",
      "initialPosition" -> """{"at_timestamp": "25.06.2020", "format": "MM/dd/yyyy"}""") shouldBe
      "Invalid value '{\"at_timestamp\": \"25.06.2020\", \"format\": \"MM/dd/yyyy\"}' for option initialPosition " +
      "(Databricks), read as kinesis.startingPosition: '25.06.2020' does not match the format 'MM/dd/yyyy'. " +
      "Accepted: latest, trim_horizon, earliest, or {\"at_timestamp\": \"<time>\", \"format\": \"<SimpleDateFormat " +
      "pattern>\"}."
  }

  test(
    "given Databricks' consumerMode efo, when parsed, then it asks for enhanced fan-out as kinesis.consumerType does") {
    source("streamName" -> "s", "consumerMode" -> "efo", "consumerName" -> "q").fanOut.flatMap(_.consumerName) shouldBe
      Some("q")
    source("streamName" -> "s", "consumerMode" -> "polling").fanOut shouldBe None
    failure("streamName" -> "s", "consumerMode" -> "push") should include(
      "option consumerMode (Databricks), read as kinesis.consumerType: it is not polling or efo")
  }

  test("given awslabs' signing region, when parsed, then it is the region") {
    source("kinesis.streamName" -> "s", "kinesis.kinesisRegion" -> "us-west-2").client.region shouldBe Some("us-west-2")
  }

  test("given two spellings of one option with different values, when parsed, then the error names both") {
    failure("kinesis.streamName" -> "a", "streamName" -> "b") shouldBe
      "Options kinesis.streamName='a' and streamName='b' both set kinesis.streamName, to different values: keep one " +
      "of them."
    failure("streamName" -> "s", "initialPosition" -> "latest", "startingPosition" -> "trim_horizon") shouldBe
      "Options initialPosition='latest' and startingPosition='trim_horizon' both set kinesis.startingPosition, to " +
      "different values: keep one of them."
    failure(
      "streamName" -> "s",
      "awsAccessKey" -> "a",
      "awsAccessKeyId" -> "a",
      "kinesis.awsSecretKey" -> "x",
      "awsSecretKey" -> "y") shouldBe
      "Options awsSecretKey and kinesis.awsSecretKey both set kinesis.awsSecretKey, to different values: keep one of " +
      "them."
  }

  test("given two spellings of one option with the same value, when parsed, then it is accepted") {
    source(
      "kinesis.streamName" -> "s",
      "streamName" -> "s",
      "initialPosition" -> "trim_horizon",
      "kinesis.startingPosition" -> "TRIM_HORIZON",
      "minFetchPeriod" -> "1s",
      "kinesis.getRecords.fetchIntervalMs" -> "1000").fetchIntervalMs shouldBe 1000L
  }

  test("given options with no equivalent here, when resolved, then each is accepted with a warning saying why") {
    warnings(
      "maxFetchRate" -> "2.0",
      "awsUseInstanceProfile" -> "false",
      "kinesis.client.avoidEmptyBatches" -> "true",
      "kinesis.executor.flushwaittimemillis" -> "100") shouldBe Seq(
      "Option awsUseInstanceProfile (qubole/roncemer) has no effect with spark-kinesis: without credentials in the " +
        "options the connector uses the AWS SDK's default chain, which ends with the instance profile.",
      "Option kinesis.client.avoidEmptyBatches (qubole/roncemer) has no effect with spark-kinesis: the source always " +
        "checks for unread records before it plans a micro-batch, and plans none without them.",
      "Option kinesis.executor.flushWaitTimeMillis (qubole/roncemer) has no effect with spark-kinesis: a write task " +
        "waits until Kinesis has confirmed each of its rows (at most kinesis.sink.recordTtl), not for a fixed flush " +
        "time.",
      "Option maxFetchRate (Databricks) has no effect with spark-kinesis: the source paces each shard by " +
        "kinesis.getRecords.fetchInterval between GetRecords calls, not by MB/s.")
    source("streamName" -> "s", "fetchBufferSize" -> "2gb", "kinesis.minBatchesToRetain" -> "5").streams shouldBe Seq(
      "s")
  }

  test("given an option whose meaning differs, when resolved, then the warning says what the connector does instead") {
    warnings("maxFetchDuration" -> "2m") shouldBe Seq(
      "Option maxFetchDuration (Databricks) is read as kinesis.maxFetchTimePerShard: the source does not prefetch " +
        "between micro-batches; this is how long a task reads one shard in a micro-batch.")
  }

  test("given Databricks' enhanced fan-out options, when resolved, then they set the consumer and its lifecycle") {
    val parsed = source(
      "streamName" -> "s",
      "consumerMode" -> "efo",
      "consumerName" -> "q1",
      "requireConsumerDeregistration" -> "false")
    parsed.fanOut.map(f => (f.consumerName, f.deregisterOnStop)) shouldBe Some((Some("q1"), false))
  }

  test("given the role aliases of qubole/roncemer and Databricks, when resolved, then they assume the role") {
    val role = "arn:aws:iam::123456789012:role/reader"
    source("streamName" -> "s", "awsSTSRoleARN" -> role).client.assumeRole.map(_.roleArn) shouldBe Some(role)
    source("streamName" -> "s", "roleArn" -> role, "roleExternalId" -> "ext-42").client.assumeRole.map(r =>
      (r.roleArn, r.externalId)) shouldBe Some((role, Some("ext-42")))
  }

  test("given a value the target refuses, when given through an alias, then the message names the alias") {
    failure(
      "streamName" -> "a b") shouldBe "Invalid value 'a b' for option streamName (qubole/roncemer, Databricks), " +
      "read as kinesis.streamName: it is not a stream name or a comma-separated list of them. Accepted: a stream " +
      "name, 1 to 128 characters of a-z A-Z 0-9 _ . -, or (source) a comma-separated list of them."
  }

  test("given alias names in any case, when parsed, then they are recognised") {
    source("STREAMNAME" -> "s", "INITIALPOSITION" -> "TRIM_HORIZON").startingPosition shouldBe
      StartingPosition.TrimHorizon
  }

  test(
    "given a misspelt kinesis option, when parsed, then it still fails, suggesting the closest name of any dialect") {
    failure("streamName" -> "s", "kinesis.executor.maxFetchTimeInMss" -> "1") should startWith(
      "Unknown option 'kinesis.executor.maxfetchtimeinmss'. Did you mean kinesis.executor.maxFetchTimeInMs?")
    failure("streamName" -> "s", "kinesis.stratingPosition" -> "LATEST") should include(
      "Did you mean kinesis.startingPosition?")
  }

  test("given a secret through an alias with a bad value, when parsed, then the message does not echo it") {
    val message = intercept[IllegalArgumentException](source(
      "streamName" -> "s",
      "awsAccessKey" -> "id",
      "awsSecretKey" -> "")).getMessage
    message should include("kinesis.awsSecretKey")
    message should include("<redacted>")
  }
}
