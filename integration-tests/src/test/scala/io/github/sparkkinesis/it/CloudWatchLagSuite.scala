package io.github.sparkkinesis.it

import scala.collection.JavaConverters._
import scala.concurrent.duration._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * The consumer lag published to CloudWatch (kinesis.emitConsumerLagMetrics), through the shaded JAR's CloudWatch
 * client, read back from moto's CloudWatch as an operator's dashboard would (ListMetrics, GetMetricData).
 */
class CloudWatchLagSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {
  private val mapper = new ObjectMapper()

  private def moto(operation: String, request: String): JsonNode = {
    val (status, answer) = CloudWatchCborShim.callMoto(
      Moto.endpoint,
      s"GraniteServiceVersion20100801.$operation",
      request,
      Some(CloudWatchCborShim.authorization(TestStreams.Region)))
    withClue(s"moto's $operation answered $answer: ")(status shouldBe 200)
    mapper.readTree(answer)
  }

  test("given a query with kinesis.emitConsumerLagMetrics, when it reads records in several batches within a minute, " +
    "then one PutMetricData brings the stream's lag and reads to its namespace, under its dimensions") {
    val shim = new CloudWatchCborShim(Moto.endpoint)
    try {
      val namespace = s"it-lag-${java.util.UUID.randomUUID().toString.take(8)}"
      val stream = TestStreams.createStream("it-cloudwatch", shards = 1)
      val first = TestStreams.putStrings(stream, TestStreams.testRecords("a", n = 20, keys = 4))
      val (query, sink) = startCollecting(readKinesis(
        stream,
        "TRIM_HORIZON",
        "kinesis.emitConsumerLagMetrics" -> "true",
        "kinesis.cloudwatch.namespace" -> namespace,
        "kinesis.cloudwatch.endpointUrl" -> shim.endpoint))
      assertReadsExactly(query, sink, first)
      val second = TestStreams.putStrings(stream, TestStreams.testRecords("b", n = 20, keys = 4))
      assertReadsExactly(query, sink, first ++ second)
      val dimensions = Map("StreamName" -> stream, "Application" -> spark.sparkContext.appName)

      val listed = Eventually.awaitValue("the stream's metrics listed in namespace " + namespace, 30.seconds) {
        val metrics = moto("ListMetrics", s"""{"Namespace": "$namespace"}""").path("Metrics").asScala.toSeq
        Some(metrics).filter(_.nonEmpty)
      }
      listed.map(_.path("MetricName").asText).toSet shouldBe Set(
        "MaxMillisBehindLatest",
        "AvgMillisBehindLatest",
        "RecordsRead",
        "BytesRead",
        "GetRecordsCalls",
        "ThrottledCalls")
      listed.foreach { m =>
        m.path("Dimensions").asScala.map(d => d.path("Name").asText -> d.path("Value").asText).toMap shouldBe dimensions
      }

      val now = System.currentTimeMillis() / 1000
      def metricQuery(id: String, metric: String, stat: String) =
        s"""{"Id": "$id", "MetricStat": {"Metric": {"Namespace": "$namespace", "MetricName": "$metric", """ +
          s""""Dimensions": [{"Name": "StreamName", "Value": "$stream"}, """ +
          s"""{"Name": "Application", "Value": "${dimensions("Application")}"}]}, "Period": 3600, "Stat": "$stat"}}"""
      val results = moto(
        "GetMetricData",
        s"""{"MetricDataQueries": [${metricQuery("records", "RecordsRead", "Sum")}, """ +
          s"""${metricQuery("lag", "MaxMillisBehindLatest", "Maximum")}], "StartTime": ${now - 3600}, """ +
          s""""EndTime": ${now + 3600}}""").path("MetricDataResults").asScala.map(r => r.path("Id").asText -> r).toMap
      val records = results("records").path("Values").asScala.map(_.asDouble).sum
      val lag = results("lag").path("Values").asScala.map(_.asDouble)
      // The first batch is published at once; the batches after it wait for the stream's minute.
      records should (be >= 1.0 and be <= 40.0)
      lag should not be empty
      lag.foreach(_ should (be >= 0.0 and be < 3600000.0))
      shim.operations.asScala.toSeq shouldBe Seq("PutMetricData")
      query.stop()
    } finally shim.close()
  }
}
