package io.github.sparkkinesis.sink

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider
import software.amazon.kinesis.producer.{Attempt, UserRecordResult}

import io.github.sparkkinesis.client.{AwsCredentials, ClientSettings, RetrySettings}
import io.github.sparkkinesis.compat.JavaCollections._

/** How the sink's settings become the KPL's configuration, and how the KPL's failures become messages. */
class KplProducerSuite extends AnyFunSuite with Matchers {

  private def settings(endpoint: Option[String], credentials: Option[AwsCredentials] = None) = ProducerSettings(
    ClientSettings(
      Some("eu-west-1"),
      endpoint.map(URI.create),
      credentials,
      RetrySettings(3, 500, 10000),
      verifyCertificate = false),
    recordMaxBufferedTimeMs = 250,
    maxConnections = 7,
    aggregationEnabled = false,
    recordTtlMs = 4000,
    maxPendingRecords = 1000,
    maxPendingBytes = 1L << 20)

  private def configuration(s: ProducerSettings) =
    KplProducer.configuration(s, AnonymousCredentialsProvider.create())

  test("the endpoint's host and port, the region and the sink options reach the KPL configuration") {
    val config = configuration(settings(Some("https://127.0.0.1:4567")))
    (config.getKinesisEndpoint, config.getKinesisPort, config.getRegion) shouldBe (("127.0.0.1", 4567L, "eu-west-1"))
    (
      config.getRecordMaxBufferedTime,
      config.getMaxConnections,
      config.isAggregationEnabled,
      config.getRecordTtl) shouldBe
      ((250L, 7L, false, 4000L))
    config.isVerifyCertificate shouldBe false
    config.getMetricsLevel shouldBe "none"
  }

  test("an endpoint without a port means 443; no endpoint leaves the KPL's regional default") {
    configuration(settings(Some("https://vpce-1.kinesis.eu-west-1.vpce.amazonaws.com"))).getKinesisPort shouldBe
      443L
    configuration(settings(None)).getKinesisEndpoint shouldBe ""
  }

  test("a record TTL beyond the KPL's overflow point reaches it as the longest it keeps, and the commit wait adds " +
    "its margin without overflowing") {
    for (ttl <- Seq(Long.MaxValue, Long.MaxValue - 1, Int.MaxValue.toLong + 1)) {
      configuration(settings(None).copy(recordTtlMs = ttl)).getRecordTtl shouldBe Int.MaxValue.toLong
      KinesisWrite.confirmTimeoutMs(ttl) shouldBe Int.MaxValue.toLong + KinesisWrite.ConfirmMarginMs
    }
    configuration(settings(None).copy(recordTtlMs = Int.MaxValue.toLong)).getRecordTtl shouldBe Int.MaxValue.toLong
    KinesisWrite.confirmTimeoutMs(100L) shouldBe 100L + KinesisWrite.ConfirmMarginMs
  }

  private def failed(attempts: (String, String)*) = new UserRecordResult(
    attempts.map { case (code, message) => new Attempt(0, 10, message, code, false) }.toList.asJava,
    null,
    null,
    false)

  test("a missing stream is named, with the options to check") {
    val message = new KplFailures(settings(None)).describe(
      "orders",
      failed("ResourceNotFoundException" -> "Stream orders not found", "Expired" -> "Record has reached expiration"))
    message should (include("stream 'orders'") and include("does not exist") and include("kinesis.streamName") and
      include("after 2 attempt(s)") and include("Stream orders not found"))
  }

  test("an expired record names the TTL option and the last real error") {
    val message = new KplFailures(settings(None)).describe(
      "orders",
      failed("Exception" -> "curlCode: 7, Could not connect", "Expired" -> "Record has reached expiration"))
    message should (include("kinesis.sink.recordTtl (4000 ms)") and include(
      "The last error was Exception: curlCode: 7"))
  }

  test("rejected credentials say so, and secrets never appear") {
    val secret = AwsCredentials("AKID", "very-secret-key", Some("session-token-xyz"))
    val message = new KplFailures(settings(None, Some(secret))).describe(
      "orders",
      failed("UnrecognizedClientException" -> "bad token session-token-xyz for very-secret-key"))
    message should (include("refused the credentials") and not include "very-secret-key" and
      not include "session-token-xyz")
  }

  test("a signature error quoting the signed request names the credentials and shows no token or signature") {
    import io.github.sparkkinesis.client.SignedRequestErrors._
    val failures = new KplFailures(settings(None))
    val message = failures.describe(
      "orders",
      failed("IncompleteSignatureException" -> Mismatch, "InvalidSignatureException" -> Headers))
    withClue(message)(clean(message) shouldBe true)
    message should include("refused the credentials")
    val crash = failures.describeCrash("orders", new RuntimeException(Headers))
    withClue(crash)(clean(crash) shouldBe true)
  }
}
