package io.github.sparkkinesis.it

import java.io.{ByteArrayOutputStream, PrintStream}
import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Instant
import java.util.UUID

import scala.collection.JavaConverters._
import scala.concurrent.duration._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.StreamingQueryException
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{
  CreateStreamRequest,
  DeleteStreamRequest,
  DescribeStreamSummaryRequest,
  ListStreamConsumersRequest,
  ListTagsForResourceRequest,
  PutRecordRequest,
  RegisterStreamConsumerRequest,
  StreamStatus
}

import io.github.sparkkinesis.tools.ConsumersCli

/**
 * Enhanced fan-out (kinesis.consumerType=SubscribeToShard) through the shaded JAR against kinesis-mock's TLS port:
 * Netty's relocated HTTP/2 client negotiates with ALPN; the emulator's self-signed certificate is accepted only because
 * these tests set kinesis.verifyCertificate=false.
 */
class EfoSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite with JsonStartingPositions {

  private def efo(consumer: (String, String)*): Seq[(String, String)] = Seq(
    "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
    "kinesis.verifyCertificate" -> "false",
    "kinesis.consumerType" -> "SubscribeToShard") ++ consumer

  private def readEfo(stream: String, start: String, consumerName: String, extra: (String, String)*): DataFrame =
    readKinesis(stream, start, efo("kinesis.consumerName" -> consumerName) ++ extra: _*)

  private def streamArn(stream: String): String = TestStreams.client.describeStreamSummary(
    DescribeStreamSummaryRequest.builder().streamName(stream).build()).streamDescriptionSummary.streamARN

  /** The stream's consumers that are not being deleted, with their status. */
  private def consumers(stream: String): Seq[String] = TestStreams.client.listStreamConsumers(
    ListStreamConsumersRequest.builder().streamARN(streamArn(stream)).build()).consumers.asScala
    .filterNot(_.consumerStatusAsString == "DELETING")
    .map(c => s"${c.consumerName} ${c.consumerStatusAsString}")
    .toVector

  test("TRIM_HORIZON through a managed consumer reads every record once, and the consumer goes on stop") {
    val stream = TestStreams.createStream("it-efo-trim", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", 60, keys = 8))
    val (query, sink) = startCollecting(readEfo(stream, "TRIM_HORIZON", "q1"))
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", 40, keys = 8))
    assertReadsExactly(query, sink, before ++ after)
    consumers(stream) shouldBe Seq("q1 ACTIVE")
    query.stop()
    consumers(stream) shouldBe empty
  }

  test("LATEST and AT_TIMESTAMP read what arrives after their start, through subscriptions") {
    val stream = TestStreams.createStream("it-efo-latest", shards = 2)
    TestStreams.putStrings(stream, TestStreams.testRecords("old", 20, keys = 4))
    val (latest, sinkLatest) = startCollecting(readEfo(stream, "LATEST", "q-latest"))
    Eventually.await("the LATEST query's first progress", 60.seconds) {
      QueryChecks.failIfStopped(latest)
      latest.recentProgress.nonEmpty
    }
    val at = Instant.now().plusSeconds(1)
    Thread.sleep(1500) // the records below must arrive after the AT_TIMESTAMP instant (a position, not a sync)
    val (atTs, sinkAt) = startCollecting(readEfo(stream, s"AT_TIMESTAMP $at", "q-at"))
    val fresh = TestStreams.putStrings(stream, TestStreams.testRecords("new", 30, keys = 4))
    assertReadsExactly(latest, sinkLatest, fresh)
    assertReadsExactly(atTs, sinkAt, fresh)
  }

  test("a JSON map of AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER and LATEST subscribes each shard where it says") {
    checkJsonStartingPositions("it-efo-json", efo("kinesis.consumerName" -> "q-json"): _*)
  }

  test("a split and a merge while the query runs: every record once, parents before children") {
    val stream = TestStreams.createStream("it-efo-reshard", shards = 2)
    val producer = new BackgroundProducer(stream, "reshard", keys = 12)
    val (query, sink) = startCollecting(readEfo(stream, "TRIM_HORIZON", "q-reshard"))
    // kinesis-mock pushes one event per second per subscription, and on a closed shard may trail GetRecords by
    // seconds: generous waits, not a tighter promise.
    sink.awaitRecords(query, 20, 120.seconds)
    TestStreams.splitShard(stream, TestStreams.openShards(stream).head.shardId)
    sink.awaitRecords(query, producer.produced.size + 5, 120.seconds)
    val (a, b) = TestStreams.adjacentOpenShards(stream)
    TestStreams.mergeShards(stream, a, b)
    sink.awaitRecords(query, producer.produced.size + 5, 120.seconds)
    val produced = producer.stop()
    assertReadsExactly(query, sink, produced, 120.seconds)
    RecordChecks.assertShardOrder(sink.records)
  }

  /**
   * Kinesis as another account sees it: kinesis-mock takes a 12-digit access key id as the caller's account, finds
   * another account's stream by its ARN, and, like AWS, not by its name (nor an ARN given as StreamName).
   */
  private lazy val otherAccount: KinesisClient = KinesisClient.builder()
    .endpointOverride(URI.create(KinesisMock.endpoint))
    .region(Region.of(TestStreams.Region))
    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("210987654321", "secret")))
    .httpClientBuilder(ApacheHttpClient.builder())
    .build()

  test("another account's stream named only by kinesis.streamARN reads every record once through a consumer the " +
    "query registers on it, and by polling") {
    val name = s"it-efo-arn-${UUID.randomUUID().toString.take(8)}"
    otherAccount.createStream(CreateStreamRequest.builder().streamName(name).shardCount(2).build())
    def summary = otherAccount.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(name).build())
      .streamDescriptionSummary
    Eventually.await(s"stream $name to become ACTIVE", TestStreams.OperationTimeout)(
      summary.streamStatus == StreamStatus.ACTIVE)
    val arn = summary.streamARN
    val records = (0 until 40).map { i =>
      val (key, payload) = (s"key-${i % 6}", s"x-$i")
      val put = otherAccount.putRecord(PutRecordRequest.builder().streamName(name).partitionKey(key)
        .data(SdkBytes.fromUtf8String(payload)).build())
      Put(key, payload.getBytes(UTF_8), put.shardId, put.sequenceNumber)
    }
    def byArn(extra: (String, String)*): DataFrame = SparkHarness.session.readStream.format("aws-kinesis")
      .options(SparkHarness.kinesisOptions(name, "TRIM_HORIZON") - "kinesis.streamName" + ("kinesis.streamARN" -> arn)
        ++ extra).load()
    try {
      val (pushed, sinkPushed) = startCollecting(byArn(efo("kinesis.consumerName" -> "q-arn"): _*))
      assertReadsExactly(pushed, sinkPushed, records)
      pushed.stop()
      val (polled, sinkPolled) = startCollecting(byArn())
      assertReadsExactly(polled, sinkPolled, records)
      polled.stop()
    } finally otherAccount.deleteStream(DeleteStreamRequest.builder().streamName(name).enforceConsumerDeletion(true)
        .build())
  }

  test("a kinesis.consumerArn of another account's stream of the same name, with the stream named by name alone, is " +
    "refused within 15 s of the query's start, naming the option and both streams' ARNs") {
    // Given stream NAME of the caller's account, and stream NAME of account 210987654321 with a consumer
    val own = TestStreams.createStream("it-efo-foreign", shards = 1)
    TestStreams.putStrings(own, TestStreams.testRecords("own", 5, keys = 2))
    otherAccount.createStream(CreateStreamRequest.builder().streamName(own).shardCount(1).build())
    def summary = otherAccount.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(own).build())
      .streamDescriptionSummary
    Eventually.await(s"stream $own of the other account to become ACTIVE", TestStreams.OperationTimeout)(
      summary.streamStatus == StreamStatus.ACTIVE)
    val theirs = otherAccount.registerStreamConsumer(RegisterStreamConsumerRequest.builder()
      .streamARN(summary.streamARN).consumerName("theirs").build()).consumer.consumerARN
    try {
      // When a query of the caller's stream, named by name, is given that consumer
      val started = System.nanoTime()
      val query = readKinesis(own, "TRIM_HORIZON", efo("kinesis.consumerArn" -> theirs): _*).writeStream
        .format("noop").option("checkpointLocation", newCheckpointDir()).start()
      val error =
        try intercept[StreamingQueryException](query.awaitTermination(30000L))
        finally query.stop()

      // Then
      (System.nanoTime() - started) / 1000000L should be < 15000L
      error.getMessage should (include(s"Option kinesis.consumerArn is '$theirs', a consumer of stream " +
        s"${summary.streamARN}, but the query reads stream ${streamArn(own)} (given as '$own')") and
        include("set kinesis.consumerName instead of kinesis.consumerArn"))
    } finally otherAccount.deleteStream(DeleteStreamRequest.builder().streamName(own).enforceConsumerDeletion(true)
        .build())
  }

  test("restarts that switch between GetRecords and SubscribeToShard on one checkpoint lose and repeat nothing") {
    val stream = TestStreams.createStream("it-efo-switch", shards = 2)
    val checkpoint = newCheckpointDir()
    val sink = new BatchCollector
    val producer = new BackgroundProducer(stream, "switch", keys = 8)
    val runs = Seq(efo("kinesis.consumerName" -> "q-switch"), Nil, efo("kinesis.consumerName" -> "q-switch"))
    runs.zipWithIndex.foreach { case (options, run) =>
      val query = sink.start(readKinesis(stream, "TRIM_HORIZON", options: _*), checkpoint)
      val had = sink.size
      Eventually.await(s"run $run to read records", 60.seconds, s"${sink.size} records") {
        QueryChecks.failIfStopped(query)
        sink.size > had + 10
      }
      query.stop()
    }
    val produced = producer.stop()
    val last =
      sink.start(readKinesis(stream, "TRIM_HORIZON", efo("kinesis.consumerName" -> "q-switch"): _*), checkpoint)
    assertReadsExactly(last, sink, produced)
  }

  test("a consumer that existed before the query is reused and kept; a self-managed ARN is never touched") {
    val stream = TestStreams.createStream("it-efo-owned", shards = 1)
    val arn = TestStreams.client.registerStreamConsumer(RegisterStreamConsumerRequest.builder()
      .streamARN(streamArn(stream)).consumerName("shared").build()).consumer.consumerARN
    val records = TestStreams.putStrings(stream, TestStreams.testRecords("r", 30, keys = 4))
    val (byName, sinkByName) = startCollecting(readEfo(stream, "TRIM_HORIZON", "shared"))
    assertReadsExactly(byName, sinkByName, records)
    byName.stop()
    val (byArn, sinkByArn) = startCollecting(readKinesis(stream, "TRIM_HORIZON", efo("kinesis.consumerArn" -> arn): _*))
    assertReadsExactly(byArn, sinkByArn, records)
    byArn.stop()
    consumers(stream) shouldBe Seq("shared ACTIVE")
  }

  /** The consumers tool's text report (exit code 0 asserted), reaching kinesis-mock with the queries' options. */
  private def consumersTool(args: String*): String = {
    val (out, err) = (new ByteArrayOutputStream(), new ByteArrayOutputStream())
    val options = (SparkHarness.kinesisOptions("unused", "LATEST") ++ efo()).filter { case (k, _) =>
      Set(
        "kinesis.endpointUrl",
        "kinesis.verifyCertificate",
        "kinesis.region",
        "kinesis.awsAccessKeyId",
        "kinesis.awsSecretKey")(k)
    }
    val code = ConsumersCli.run(
      args ++ options.toSeq.flatMap { case (k, v) => Seq("--option", s"$k=$v") },
      new PrintStream(out),
      new PrintStream(err))
    withClue(err.toString("UTF-8"))(code shouldBe 0)
    out.toString("UTF-8")
  }

  test("deregisterConsumerOnStop=false keeps the consumer the query registered, tagged, held by its checkpoint as " +
    "the consumers tool sees it, and the next run reuses it") {
    val stream = TestStreams.createStream("it-efo-keep", shards = 1)
    val checkpoint = newCheckpointDir()
    val sink = new BatchCollector
    val first = TestStreams.putStrings(stream, TestStreams.testRecords("a", 10, keys = 2))
    val keep = readEfo(
      stream,
      "TRIM_HORIZON",
      "kept",
      "kinesis.deregisterConsumerOnStop" -> "false",
      "kinesis.consumerTags" -> """{"team": "orders"}""")
    val q1 = sink.start(keep, checkpoint)
    sink.awaitRecords(q1, first.size)
    q1.stop()
    consumers(stream) shouldBe Seq("kept ACTIVE")
    // kinesis-mock drops RegisterStreamConsumer's tags: the connector added them with TagResource, which it keeps.
    val consumerArn = TestStreams.client.listStreamConsumers(
      ListStreamConsumersRequest.builder().streamARN(streamArn(stream)).build()).consumers.asScala.head.consumerARN
    val tags = TestStreams.client.listTagsForResource(ListTagsForResourceRequest.builder().resourceARN(consumerArn)
      .build()).tags.asScala.map(t => t.key -> t.value).toMap
    tags("team") shouldBe "orders"
    tags("spark-kinesis/checkpoint") should endWith("/sources/0")
    val listed = consumersTool("list", "--stream", stream)
    listed should include("kept  ACTIVE")
    listed should include(s"/sources/0/efo-consumer-$stream records it")
    consumersTool("prune", "--stream", stream, "--older-than", "0s") should include("Nothing to prune")
    val second = TestStreams.putStrings(stream, TestStreams.testRecords("b", 10, keys = 2))
    val q2 = sink.start(readEfo(stream, "TRIM_HORIZON", "kept"), checkpoint)
    assertReadsExactly(q2, sink, first ++ second)
    q2.stop()
    consumers(stream) shouldBe empty // registered by this query (its checkpoint says so), so the default removes it
  }
}
