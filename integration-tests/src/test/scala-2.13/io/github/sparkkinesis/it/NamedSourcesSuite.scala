package io.github.sparkkinesis.it

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.services.kinesis.model.{DescribeStreamSummaryRequest, ListStreamConsumersRequest}

/**
 * Spark 4.2's named sources (`readStream.name(...)` with source evolution on): Spark gives each source the metadata
 * path `sources/<name>` of the checkpoint, so a Kinesis source added to a running query's checkpoint starts at
 * kinesis.startingPosition, and sources reordered in the plan each find their own offsets, shard ends and fan-out
 * consumer record. One query per scenario is started three times on one checkpoint: one source, then a second added,
 * then the two swapped; every record arrives exactly once.
 */
class NamedSourcesSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /**
   * Source evolution, and the offset log format that keeps offsets by source name, which Spark 4.2.0 needs set besides
   * (later releases choose it themselves when source evolution is on).
   */
  private val SourceEvolution = Seq(
    "spark.sql.streaming.queryEvolution.enableSourceEvolution" -> "true",
    "spark.sql.streaming.offsetLog.formatVersion" -> "2")

  /** The store and consumer options of one scenario, with what the scenario is called. */
  private case class Scenario(name: String, options: () => Seq[(String, String)], fanOut: Boolean)

  private val scenarios = Seq(
    Scenario("polling, HDFS store", () => Nil, fanOut = false),
    Scenario("polling, DynamoDB store", () => DynamoDbLocal.storeOptions(), fanOut = false),
    Scenario(
      "enhanced fan-out, DynamoDB store",
      () =>
        DynamoDbLocal.storeOptions() ++ Seq(
          "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
          "kinesis.verifyCertificate" -> "false",
          "kinesis.consumerType" -> "SubscribeToShard",
          "kinesis.consumerName" -> "it-named-sources",
          // Kept between the runs, so the swapped sources must find the consumers their first run registered.
          "kinesis.deregisterConsumerOnStop" -> "false"),
      fanOut = true))

  /** The source named `name` on `stream`, from TRIM_HORIZON, with the scenario's options. */
  private def named(name: String, stream: String, options: Seq[(String, String)]): DataFrame =
    spark.readStream.format("aws-kinesis")
      .options(SparkHarness.kinesisOptions(stream, "TRIM_HORIZON") ++ options)
      .name(name)
      .load()

  private def streamArn(stream: String): String = TestStreams.client.describeStreamSummary(
    DescribeStreamSummaryRequest.builder().streamName(stream).build()).streamDescriptionSummary.streamARN

  /** The names of the stream's consumers that are not being deleted. */
  private def consumers(stream: String): Seq[String] = TestStreams.client.listStreamConsumers(
    ListStreamConsumersRequest.builder().streamARN(streamArn(stream)).build()).consumers.asScala
    .filterNot(_.consumerStatusAsString == "DELETING").map(_.consumerName).toVector

  for (scenario <- scenarios) {
    test(s"named sources (${scenario.name}): a second Kinesis source added to the checkpoint reads from " +
      "kinesis.startingPosition, the first goes on, and swapping them in the plan keeps each on its own offsets") {
      val orders = TestStreams.createStream("it-named-orders", shards = 2)
      val clicks = TestStreams.createStream("it-named-clicks", shards = 1)
      val options = scenario.options()
      val checkpoint = newCheckpointDir()
      val sink = new BatchCollector
      def tagged(stream: String, prefix: String, n: Int): Seq[(String, String)] =
        TestStreams.putStrings(stream, TestStreams.testRecords(prefix, n, keys = 4)).map(p => stream -> p.payload)
      def runUntil(df: DataFrame, expected: Int): Unit = {
        val query = sink.start(df, checkpoint)
        try {
          sink.awaitRecords(query, expected)
          query.processAllAvailable()
        } finally query.stop()
      }
      SourceEvolution.foreach { case (key, value) => spark.conf.set(key, value) }
      try {
        // Given a query reading one named source
        val first = tagged(orders, "o1", 40)
        runUntil(named("orders", orders, options), first.size)

        // When it restarts with a second named source, then with the two swapped in the plan
        val second = tagged(orders, "o2", 20) ++ tagged(clicks, "c2", 30)
        runUntil(named("orders", orders, options).union(named("clicks", clicks, options)), (first ++ second).size)
        val third = tagged(orders, "o3", 20) ++ tagged(clicks, "c3", 20)
        runUntil(
          named("clicks", clicks, options).union(named("orders", orders, options)),
          (first ++ second ++ third).size)

        // Then every record arrived once, each by its position in its stream too
        assert(sink.errors.isEmpty, sink.errors.mkString("; "))
        RecordChecks.assertExactlyOnce(
          first ++ second ++ third,
          sink.records.map(r => r.streamName -> r.payload),
          scenario.name)
        val positions = sink.records.map(r => (r.streamName, r.position3))
        positions.distinct.size shouldBe positions.size
        // and each source's metadata sits under its name, where the swapped plan found it
        Seq("orders", "clicks").foreach { name =>
          assert(new File(checkpoint, s"sources/$name").isDirectory, s"no metadata of source '$name' in $checkpoint")
        }
        if (scenario.fanOut) {
          // and each source went on through the consumer its first run registered and recorded under its name
          Seq("orders" -> orders, "clicks" -> clicks).foreach { case (name, stream) =>
            consumers(stream) shouldBe Seq("it-named-sources")
            new File(checkpoint, s"sources/$name").list().filter(_.startsWith("efo-")).toSeq shouldBe
              Seq(s"efo-consumer-$stream")
          }
        }
      } finally SourceEvolution.foreach { case (key, _) => spark.conf.unset(key) }
    }
  }
}
