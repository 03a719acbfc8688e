package io.github.sparkkinesis.cloudwatch

import java.io.ByteArrayOutputStream
import java.net.{InetAddress, InetSocketAddress, URI}

import io.github.sparkkinesis.compat.JavaCollections._

import com.fasterxml.jackson.databind.ObjectMapper
import com.sun.net.httpserver.{HttpExchange, HttpServer}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.thirdparty.jackson.core.JsonFactory
import software.amazon.awssdk.thirdparty.jackson.dataformat.cbor.CBORFactory

import io.github.sparkkinesis.client.{AwsCredentials, ClientSettings, RetrySettings}
import io.github.sparkkinesis.options.CloudWatchSettings

/**
 * The SDK's PutMetricData as the publisher calls it, against a loopback server that answers as CloudWatch does (Smithy
 * RPC v2 CBOR): what the request carries, and a refusal for want of permission told apart from other failures.
 */
class SdkMetricsClientSuite extends AnyFunSuite with Matchers {
  private val cbor = new CBORFactory()

  /** A server answering every call with `status` and `body` (as CBOR); the calls' paths and bodies (as JSON). */
  private final class CloudWatchStub(status: Int, body: String) extends AutoCloseable {
    @volatile var calls: Seq[(String, String)] = Nil
    private val server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress, 0), 5)
    server.createContext(
      "/",
      (exchange: HttpExchange) =>
        try {
          calls :+= exchange.getRequestURI.getPath -> new String(
            recode(cbor, new JsonFactory(), read(exchange)),
            "UTF-8")
          val answer = recode(new JsonFactory(), cbor, body.getBytes("UTF-8"))
          exchange.getResponseHeaders.add("Content-Type", "application/cbor")
          exchange.getResponseHeaders.add("smithy-protocol", "rpc-v2-cbor")
          exchange.sendResponseHeaders(status, answer.length.toLong)
          exchange.getResponseBody.write(answer)
        } finally exchange.close())
    server.start()

    val client = new SdkMetricsClient(
      ClientSettings(Some("us-east-1"), None, Some(AwsCredentials("AKID", "secret", None)), RetrySettings(0, 10, 10)),
      CloudWatchSettings("Team/Orders", Nil, Some(new URI(s"http://127.0.0.1:${server.getAddress.getPort}")), None))

    override def close(): Unit = {
      client.close()
      server.stop(0)
    }
  }

  private def read(exchange: HttpExchange): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val buffer = new Array[Byte](4096)
    Iterator.continually(exchange.getRequestBody.read(buffer)).takeWhile(_ >= 0).foreach(out.write(buffer, 0, _))
    out.toByteArray
  }

  /** `bytes` in `from`'s format (JSON or CBOR) re-encoded in `to`'s. */
  private def recode(from: JsonFactory, to: JsonFactory, bytes: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val (parser, generator) = (from.createParser(bytes), to.createGenerator(out))
    parser.nextToken()
    generator.copyCurrentStructure(parser)
    generator.close()
    out.toByteArray
  }

  private val datum = Datum(
    "MaxMillisBehindLatest",
    "Milliseconds",
    Stats(3, 4500, 500, 3000),
    Seq("StreamName" -> "orders", "Application" -> "etl"),
    1700000000000L)

  test(
    "given a stream's data, then one PutMetricData carries the namespace, statistic set, unit, dimensions and time") {
    val stub = new CloudWatchStub(200, "{}")
    try {
      stub.client.put("Team/Orders", Seq(datum, datum.copy(name = "RecordsRead", unit = "Count")))
      val Seq((path, body)) = stub.calls
      path shouldBe "/service/GraniteServiceVersion20100801/operation/PutMetricData"
      val request = new ObjectMapper().readTree(body)
      request.path("Namespace").asText shouldBe "Team/Orders"
      val Seq(lag, records) = request.path("MetricData").asScala.toSeq
      (lag.path("MetricName").asText, lag.path("Unit").asText) shouldBe (("MaxMillisBehindLatest", "Milliseconds"))
      Seq("SampleCount", "Sum", "Minimum", "Maximum").map(lag.path("StatisticValues").path(_).asDouble) shouldBe
        Seq(3.0, 4500.0, 500.0, 3000.0)
      lag.path("Dimensions").asScala.map(d => d.path("Name").asText -> d.path("Value").asText).toSeq shouldBe
        datum.dimensions
      lag.path("Timestamp").asDouble shouldBe 1.7e9
      (records.path("MetricName").asText, records.path("Unit").asText) shouldBe (("RecordsRead", "Count"))
    } finally stub.close()
  }

  test("given CloudWatch refusing for want of permission, then the failure is PublishDenied with CloudWatch's words; " +
    "given another failure, then it is not") {
    val denied = new CloudWatchStub(
      403,
      """{"__type": "AccessDenied", "message": "User is not authorized to perform: cloudwatch:PutMetricData"}""")
    try {
      val e = intercept[PublishDenied](denied.client.put("Team/Orders", Seq(datum)))
      e.getMessage should include("not authorized to perform: cloudwatch:PutMetricData")
    } finally denied.close()
    val failing = new CloudWatchStub(400, """{"__type": "InvalidParameterValue", "message": "bad value"}""")
    try {
      val e = intercept[Exception](failing.client.put("Team/Orders", Seq(datum)))
      e should not be a[PublishDenied]
    } finally failing.close()
  }
}
