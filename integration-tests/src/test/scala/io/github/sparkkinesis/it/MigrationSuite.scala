package io.github.sparkkinesis.it

import scala.concurrent.duration._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.StreamingQuery
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.it.SinkHarness.readBack

/**
 * The read and write examples the awslabs, qubole/roncemer and Databricks connectors document, with their format names
 * and option spellings, run against the emulator with this connector's JAR and read or write every record exactly once.
 * What the emulator needs beyond a real AWS endpoint is added and said so: its endpoint (in the dialect's spelling),
 * test credentials where the example leaves them to the environment, and `kinesis.verifyCertificate=false` for writes
 * to its self-signed TLS port.
 */
class MigrationSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {
  import SparkHarness.session.implicits._

  /** Runs `body` with JVM system property `name` set, as a machine's environment (AWS_REGION) would set it. */
  private def withSystemProperty[T](name: String, value: String)(body: => T): T = {
    val before = Option(System.getProperty(name))
    System.setProperty(name, value)
    try body
    finally before.fold(System.clearProperty(name))(System.setProperty(name, _))
  }

  /** The payloads of `puts`, the multiset a write of them is checked against. */
  private def payloads(puts: Seq[Put]): Seq[String] = puts.map(_.payload)

  /** Lets `query` process everything available, stops it and checks it did not fail. */
  private def drain(query: StreamingQuery): Unit = {
    query.processAllAvailable()
    query.stop()
    query.exception shouldBe None
  }

  // --- qubole / roncemer: format "kinesis", options without the kinesis. prefix, region from the environment ---

  private def quboleRead(stream: String): DataFrame = spark
    .readStream
    .format("kinesis")
    .option("streamName", stream)
    .option("endpointUrl", KinesisMock.endpoint)
    .option("awsAccessKeyId", TestStreams.AccessKeyId)
    .option("awsSecretKey", TestStreams.SecretKey)
    .option("startingposition", "TRIM_HORIZON")
    .load

  test("given qubole/roncemer's read example, when run, then it reads every record once") {
    withSystemProperty("aws.region", TestStreams.Region) {
      // Given
      val stream = TestStreams.createStream("mig-qubole-read", shards = 2)
      val puts = TestStreams.putStrings(stream, TestStreams.testRecords("qubole", n = 300, keys = 20))
      // When
      val (query, sink) = startCollecting(quboleRead(stream))
      // Then
      assertReadsExactly(query, sink, puts)
    }
  }

  test("given qubole/roncemer's write example, when run, then every row lands once") {
    withSystemProperty("aws.region", TestStreams.Region) {
      // Given
      val from = TestStreams.createStream("mig-qubole-from", shards = 2)
      val to = TestStreams.createStream("mig-qubole-to", shards = 2)
      val puts = TestStreams.putStrings(from, TestStreams.testRecords("qubole-w", n = 300, keys = 20))
      // When
      val query = quboleRead(from)
        .selectExpr("CAST(rand() AS STRING) as partitionKey", "CAST(data AS STRING)").as[(String, String)]
        .writeStream
        .format("kinesis")
        .outputMode("update")
        .option("streamName", to)
        .option("endpointUrl", KinesisMock.tlsEndpoint)
        .option("awsAccessKeyId", TestStreams.AccessKeyId)
        .option("awsSecretKey", TestStreams.SecretKey)
        .option("kinesis.executor.aggregationEnabled", "true")
        .option("kinesis.executor.flushwaittimemillis", "100")
        .option("kinesis.verifyCertificate", "false")
        .option("checkpointLocation", newCheckpointDir())
        .start()
      drain(query)
      // Then
      RecordChecks.assertExactlyOnce(payloads(puts), readBack(to)._1.map(_.payload), s"rows in $to")
    }
  }

  // --- awslabs: format "aws-kinesis", kinesis.* options ---

  test(
    "given awslabs' GetRecords read example (LATEST), when run, then it reads every record put after the start once") {
    // Given
    val stream = TestStreams.createStream("mig-awslabs-read", shards = 2)
    TestStreams.putStrings(stream, TestStreams.testRecords("awslabs-before", n = 50, keys = 10))
    // When
    val kinesis = spark
      .readStream
      .format("aws-kinesis")
      .option("kinesis.region", TestStreams.Region)
      .option("kinesis.streamName", stream)
      .option("kinesis.consumerType", "GetRecords")
      .option("kinesis.endpointUrl", KinesisMock.endpoint)
      .option("kinesis.startingposition", "LATEST")
      .option("kinesis.awsAccessKeyId", TestStreams.AccessKeyId)
      .option("kinesis.awsSecretKey", TestStreams.SecretKey)
      .option("kinesis.kinesisRegion", TestStreams.Region)
      .option("kinesis.checkNewRecordThreads", "8")
      .load
    val (query, sink) = startCollecting(kinesis)
    query.processAllAvailable()
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("awslabs-after", n = 300, keys = 20))
    // Then
    assertReadsExactly(query, sink, after)
  }

  test("given awslabs' sink example, when run, then every row lands once") {
    // Given
    val from = TestStreams.createStream("mig-awslabs-from", shards = 2)
    val to = TestStreams.createStream("mig-awslabs-to", shards = 2)
    val puts = TestStreams.putStrings(from, TestStreams.testRecords("awslabs-w", n = 300, keys = 20))
    val kinesis = spark.readStream.format("aws-kinesis")
      .option("kinesis.region", TestStreams.Region)
      .option("kinesis.streamName", from)
      .option("kinesis.endpointUrl", KinesisMock.endpoint)
      .option("kinesis.startingposition", "TRIM_HORIZON")
      .option("kinesis.awsAccessKeyId", TestStreams.AccessKeyId)
      .option("kinesis.awsSecretKey", TestStreams.SecretKey)
      .load
    // When
    val query = kinesis
      .selectExpr("CAST(rand() AS STRING) as partitionKey", "CAST(data AS STRING)").as[(String, String)]
      .writeStream
      .format("aws-kinesis")
      .outputMode("append")
      .option("kinesis.region", TestStreams.Region)
      .option("kinesis.streamName", to)
      .option("kinesis.endpointUrl", KinesisMock.tlsEndpoint)
      .option("kinesis.awsAccessKeyId", TestStreams.AccessKeyId)
      .option("kinesis.awsSecretKey", TestStreams.SecretKey)
      .option("kinesis.sink.flushWaitTimeMs", "100")
      .option("kinesis.verifyCertificate", "false")
      .option("checkpointLocation", newCheckpointDir())
      .start()
    drain(query)
    // Then
    RecordChecks.assertExactlyOnce(payloads(puts), readBack(to)._1.map(_.payload), s"rows in $to")
  }

  // --- Databricks: format "kinesis", its own option names and value formats, the stream column ---

  private def databricksRead(stream: String): DataFrame = spark.readStream
    .format("kinesis")
    .option("streamName", stream)
    .option("region", TestStreams.Region)
    .option("endpoint", KinesisMock.endpoint)
    .option("initialPosition", "trim_horizon")
    .option("awsAccessKey", TestStreams.AccessKeyId)
    .option("awsSecretKey", TestStreams.SecretKey)
    .option("maxRecordsPerFetch", "500")
    .option("minFetchPeriod", "200ms")
    .option("shardFetchInterval", "1s")
    .option("consumerMode", "polling")
    .option("fetchBufferSize", "2gb")
    .load()

  test("given Databricks' read example on two streams, when run, then it reads every record once and a notebook " +
    "can select stream") {
    // Given
    val first = TestStreams.createStream("mig-databricks-a", shards = 2)
    val second = TestStreams.createStream("mig-databricks-b", shards = 1)
    val firstPuts = TestStreams.putStrings(first, TestStreams.testRecords("databricks-a", n = 200, keys = 20))
    val secondPuts = TestStreams.putStrings(second, TestStreams.testRecords("databricks-b", n = 100, keys = 10))
    val puts = firstPuts ++ secondPuts
    // When: the whole rows into the collector, and a notebook's selection of the stream column into a memory table
    val (query, sink) = startCollecting(databricksRead(s"$first,$second"))
    val notebook = databricksRead(s"$first,$second")
      .selectExpr("stream", "CAST(data AS STRING) AS payload")
      .writeStream.format("memory").queryName("databricks_notebook")
      .option("checkpointLocation", newCheckpointDir()).start()
    // Then
    assertReadsExactly(query, sink, puts)
    drain(notebook)
    val selected = spark.table("databricks_notebook").as[(String, String)].collect().toSeq
    RecordChecks.assertExactlyOnce(
      firstPuts.map(p => (first, p.payload)) ++ secondPuts.map(p => (second, p.payload)),
      selected,
      "rows the notebook selected")
  }

  test("given Databricks' option spellings on a write, when run, then every row lands once") {
    // Given
    val to = TestStreams.createStream("mig-databricks-to", shards = 2)
    val rows = (0 until 500).map(i => (s"key-${i % 20}", s"databricks-w-$i"))
    // When
    rows.toDF("partitionKey", "data").write
      .format("kinesis")
      .option("streamName", to)
      .option("region", TestStreams.Region)
      .option("endpoint", KinesisMock.tlsEndpoint)
      .option("awsAccessKey", TestStreams.AccessKeyId)
      .option("awsSecretKey", TestStreams.SecretKey)
      .option("kinesis.verifyCertificate", "false")
      .save()
    // Then
    RecordChecks.assertExactlyOnce(rows, SinkHarness.keyed(readBack(to)._1), s"rows in $to")
  }

  test("given two spellings of one option with different values, when loaded, then the error names both") {
    val error = intercept[IllegalArgumentException](spark.readStream.format("kinesis")
      .option("streamName", "any").option("initialPosition", "trim_horizon").option("startingPosition", "latest")
      .load())
    error.getMessage shouldBe "Options initialPosition='trim_horizon' and startingPosition='latest' both set " +
      "kinesis.startingPosition, to different values: keep one of them."
  }
}
