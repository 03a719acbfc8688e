package io.github.sparkkinesis.payloads

import java.io.{ByteArrayOutputStream, IOException, InputStream}
import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import software.amazon.awssdk.http.{ContentStreamProvider, HttpExecuteRequest, SdkHttpFullRequest, SdkHttpMethod}
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.http.auth.aws.signer.{AwsV4FamilyHttpSigner, AwsV4HttpSigner}
import software.amazon.awssdk.http.auth.spi.signer.SignRequest
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity

import io.github.sparkkinesis.client.{Backoff, CredentialsProviders, IdleCache, IdleSweeper, SdkKinesisClient}

/** Glue answered a call with an error: its HTTP status, error code (such as EntityNotFoundException) and message. */
final class GlueCallFailed(val status: Int, val errorCode: String, message: String) extends RuntimeException(message)

/**
 * Calls of AWS Glue's JSON API (the four the payload functions make), signed with SigV4 by the SDK's signer and sent
 * with its Apache HTTP client, with the target's region, credentials and retries: the SDK's glue module would add 9.4
 * MB to each of the wheel's two JARs for the same four calls. Throttling, server errors and I/O failures are retried
 * with the connector's back-off; other errors fail at once as [[GlueCallFailed]].
 */
private[payloads] final class GlueHttp(target: GlueTarget) extends AutoCloseable {
  private val region = SdkKinesisClient.region(target.settings.copy(endpointUrl = target.endpoint))
  private val endpoint = target.endpoint.getOrElse {
    val domain = Option(region.metadata).map(_.partition.dnsSuffix).getOrElse("amazonaws.com")
    URI.create(s"https://glue.${region.id}.$domain")
  }
  private val credentials = CredentialsProviders.of(target.settings)
  private val http = ApacheHttpClient.builder().build()
  private val signer = AwsV4HttpSigner.create()

  /** The JSON answer of Glue's `operation` (such as GetSchemaVersion) to `body`. */
  def call(operation: String, body: ObjectNode): JsonNode = {
    val bytes = GlueHttp.Json.writeValueAsBytes(body)
    val backoff = new Backoff(target.settings.retry.baseDelayMs, target.settings.retry.maxDelayMs)
    var attempt = 0
    var answer: Option[JsonNode] = None
    while (answer.isEmpty) {
      try answer = Some(once(operation, bytes))
      catch {
        case e @ (_: IOException | _: GlueCallFailed) if attempt < target.settings.retry.numRetries && retryable(e) =>
          attempt += 1
          Thread.sleep(backoff.nextDelayMs())
      }
    }
    answer.get
  }

  private def retryable(e: Throwable): Boolean = e match {
    case failed: GlueCallFailed =>
      failed.status >= 500 || failed.status == 429 || failed.errorCode.contains("Throttl")
    case _ => true
  }

  private def once(operation: String, body: Array[Byte]): JsonNode = {
    val request = SdkHttpFullRequest.builder().method(SdkHttpMethod.POST).uri(endpoint)
      .putHeader("Content-Type", "application/x-amz-json-1.1")
      .putHeader("X-Amz-Target", s"AWSGlue.$operation")
      .putHeader("Content-Length", body.length.toString)
      .build()
    val identity: AwsCredentialsIdentity = credentials.resolveCredentials()
    val signed = signer.sign(SignRequest.builder(identity).request(request)
      .payload(ContentStreamProvider.fromByteArray(body))
      .putProperty(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME, "glue")
      .putProperty(AwsV4HttpSigner.REGION_NAME, region.id).build())
    val response = http.prepareRequest(HttpExecuteRequest.builder().request(signed.request)
      .contentStreamProvider(signed.payload.orElse(null)).build()).call()
    val text = if (response.responseBody.isPresent) GlueHttp.readAll(response.responseBody.get) else ""
    val status = response.httpResponse.statusCode
    val json = if (text.trim.isEmpty) GlueHttp.Json.createObjectNode() else GlueHttp.Json.readTree(text)
    if (status / 100 == 2) json
    else {
      val code = Option(json.get("__type")).map(_.asText.split('#').last).getOrElse(s"HTTP $status")
      val message = Option(json.get("message")).orElse(Option(json.get("Message"))).map(_.asText).getOrElse(text)
      throw new GlueCallFailed(status, code, s"$code: $message")
    }
  }

  override def close(): Unit = {
    http.close()
    credentials match {
      case closeable: AutoCloseable => closeable.close()
      case _ =>
    }
  }
}

private[payloads] object GlueHttp {
  val Json = new ObjectMapper()

  /** One caller per distinct target in this JVM, shared by its tasks; closed once unused for a while. */
  private lazy val callers = {
    val cache = new IdleCache[GlueTarget, GlueHttp](
      new GlueHttp(_),
      _.close(),
      IdleSweeper.IdleMs,
      () => System.currentTimeMillis())
    IdleSweeper.start("spark-kinesis-idle-glue")(() => cache.sweep())
    cache
  }

  def use[T](target: GlueTarget)(call: GlueHttp => T): T = callers.use(target)(call)

  private def readAll(in: InputStream): String =
    try {
      val out = new ByteArrayOutputStream()
      val chunk = new Array[Byte](8192)
      var n = in.read(chunk)
      while (n >= 0) {
        out.write(chunk, 0, n)
        n = in.read(chunk)
      }
      new String(out.toByteArray, UTF_8)
    } finally in.close()
}
