package io.github.sparkkinesis.it

import java.io.{ByteArrayOutputStream, InputStream}
import java.net.{HttpURLConnection, InetAddress, InetSocketAddress, URL}
import java.util.concurrent.ConcurrentLinkedQueue

import com.sun.net.httpserver.{HttpExchange, HttpServer}
import software.amazon.awssdk.thirdparty.jackson.core.{JsonFactory, JsonParser}
import software.amazon.awssdk.thirdparty.jackson.dataformat.cbor.CBORFactory

/**
 * CloudWatch at moto for the AWS SDK's CloudWatch client. The SDK speaks only Smithy RPC v2 CBOR to CloudWatch (since
 * 2.40.6), which moto does not understand (getmoto/moto#9195); moto speaks the JSON 1.0 protocol CloudWatch accepts
 * too. This loopback server takes the SDK's CBOR calls (`POST /service/GraniteServiceVersion20100801/operation/<Op>`),
 * re-encodes each body as JSON for moto (CBOR timestamps are epoch seconds, as JSON 1.0's are) and moto's answer as
 * CBOR; the SDK's signature goes along, so moto files the metrics under the signed region. It records the operation of
 * every call it forwards.
 */
final class CloudWatchCborShim(motoEndpoint: String) extends AutoCloseable {
  private val Target = "GraniteServiceVersion20100801"
  private val cbor = new CBORFactory()
  private val json = new JsonFactory()
  private val server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress, 0), 10)

  /** The operations forwarded so far, in order (PutMetricData, ...). */
  val operations = new ConcurrentLinkedQueue[String]()

  server.createContext("/", (exchange: HttpExchange) => handle(exchange))
  server.start()

  /** Where the connector's `kinesis.cloudwatch.endpointUrl` should point. */
  val endpoint: String = s"http://127.0.0.1:${server.getAddress.getPort}"

  private def handle(exchange: HttpExchange): Unit =
    try {
      val operation = exchange.getRequestURI.getPath.split('/').last
      operations.add(operation)
      val body = CloudWatchCborShim.readAll(exchange.getRequestBody)
      val request = if (body.isEmpty) "{}" else new String(convert(cbor.createParser(body), json), "UTF-8")
      val authorization = Option(exchange.getRequestHeaders.getFirst("Authorization"))
      val (status, answer) = CloudWatchCborShim.callMoto(motoEndpoint, s"$Target.$operation", request, authorization)
      val out = convert(json.createParser(if (answer.trim.isEmpty) "{}" else answer), cbor)
      exchange.getResponseHeaders.add("Content-Type", "application/cbor")
      exchange.getResponseHeaders.add("smithy-protocol", "rpc-v2-cbor")
      exchange.sendResponseHeaders(status, out.length.toLong)
      exchange.getResponseBody.write(out)
    } finally exchange.close()

  private def convert(parser: JsonParser, to: JsonFactory): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val generator = to.createGenerator(bytes)
    try {
      parser.nextToken()
      generator.copyCurrentStructure(parser)
    } finally {
      generator.close()
      parser.close()
    }
    bytes.toByteArray
  }

  override def close(): Unit = server.stop(0)
}

object CloudWatchCborShim {

  /** A signature's scope for moto, which reads the region from it and checks nothing else. */
  def authorization(region: String): String =
    s"AWS4-HMAC-SHA256 Credential=test/20260101/$region/monitoring/aws4_request, SignedHeaders=host, Signature=0"

  /** Calls CloudWatch's JSON 1.0 operation `target` at moto with `body`; its status and answer. */
  def callMoto(motoEndpoint: String, target: String, body: String, authorization: Option[String]): (Int, String) = {
    val connection = new URL(s"$motoEndpoint/").openConnection().asInstanceOf[HttpURLConnection]
    connection.setRequestMethod("POST")
    connection.setDoOutput(true)
    connection.setConnectTimeout(5000)
    connection.setReadTimeout(10000)
    connection.setRequestProperty("Content-Type", "application/x-amz-json-1.0")
    connection.setRequestProperty("X-Amz-Target", target)
    authorization.foreach(connection.setRequestProperty("Authorization", _))
    connection.getOutputStream.write(body.getBytes("UTF-8"))
    val status = connection.getResponseCode
    val stream = Option(if (status < 400) connection.getInputStream else connection.getErrorStream)
    try status -> stream.map(s => new String(readAll(s), "UTF-8")).getOrElse("")
    finally connection.disconnect()
  }

  /** Everything `in` holds (the tests compile for Java 8, which has no InputStream.readAllBytes). */
  def readAll(in: InputStream): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val buffer = new Array[Byte](8192)
    Iterator.continually(in.read(buffer)).takeWhile(_ >= 0).foreach(out.write(buffer, 0, _))
    out.toByteArray
  }
}
