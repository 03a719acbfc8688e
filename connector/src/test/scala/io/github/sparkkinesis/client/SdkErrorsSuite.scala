package io.github.sparkkinesis.client

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.model.{ExpiredIteratorException => SdkExpiredIteratorException, _}

class SdkErrorsSuite extends AnyFunSuite with Matchers {

  private val secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET"
  private val token = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"
  private val chainSettings = ClientSettings(Some("us-east-1"), None, None, RetrySettings(0, 1, 1))
  private val fromOptions =
    SdkErrors.of(chainSettings.copy(credentials = Some(AwsCredentials("AKID", secret, Some(token)))))
  private val fromChain = SdkErrors.of(chainSettings)

  private def serviceError(builder: AwsServiceException.Builder, status: Int, code: String, message: String) =
    builder.statusCode(status).requestId("req-42").message(message)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("Kinesis").build())
      .build()

  private def translate(e: Throwable, shardId: Option[String] = None, errors: SdkErrors = fromOptions) =
    errors.translate(e, "GetRecords", "orders", shardId)

  test("throttling, limits and coded server failures become ThrottledException") {
    // Given the ways Kinesis says "not now"
    val failures = Seq(
      serviceError(
        ProvisionedThroughputExceededException.builder(),
        400,
        "ProvisionedThroughputExceededException",
        "Rate exceeded for shard shardId-000000000001"),
      serviceError(LimitExceededException.builder(), 400, "LimitExceededException", "Rate exceeded"),
      serviceError(KmsThrottlingException.builder(), 400, "KMSThrottlingException", "KMS rate exceeded"),
      serviceError(InternalFailureException.builder(), 500, "InternalFailure", "Internal service failure"),
      KinesisException.builder().statusCode(503).message("Service Unavailable").build())

    // When they are translated
    val translated = failures.map(f => translate(f))

    // Then each is a ThrottledException naming the operation and the stream, with the SDK error as cause
    translated.zip(failures).foreach { case (t, f) =>
      t shouldBe a[ThrottledException]
      t.getMessage should include("GetRecords")
      t.getMessage should include("stream 'orders'")
      t.getCause shouldBe f
    }
  }

  test("a 500 without an error code is not throttling (kinesis-mock's answer to a malformed iterator)") {
    // Given the bare 500 kinesis-mock sends where AWS sends 400 InvalidArgumentException
    val bare = KinesisException.builder().statusCode(500).message("Service returned HTTP status code 500").build()

    // When it is translated
    val t = translate(bare)

    // Then it is a refusal, not throttling, so a reader does not retry it forever
    t.getClass shouldBe classOf[RequestRefusedException]
    t.getMessage should include("HTTP 500")
  }

  test("an AT_TIMESTAMP iterator refused as ahead of the service's clock becomes TimestampInFutureException") {
    // Given the refusal as AWS words it, and as kinesis-mock does
    val aws = serviceError(
      InvalidArgumentException.builder(),
      400,
      "InvalidArgumentException",
      "The timestampInMillis parameter cannot be greater than the currentTimestampInMillis. timestampInMillis: " +
        "1714564860000, currentTimestampInMillis: 1714564800000")
    val mock = serviceError(
      InvalidArgumentException.builder(),
      400,
      "InvalidArgumentException",
      "Timestamp 1714564860000 is in the future")
    // When GetShardIterator's failures are translated, then both say "not yet"; another InvalidArgument does not
    Seq(aws, mock).foreach { e =>
      fromOptions.translate(e, "GetShardIterator", "orders", Some("shardId-0")) shouldBe a[TimestampInFutureException]
    }
    val other = serviceError(InvalidArgumentException.builder(), 400, "InvalidArgumentException", "Bad shard id")
    fromOptions.translate(other, "GetShardIterator", "orders", Some("shardId-0")) should not be a[
      TimestampInFutureException]
  }

  test("an expired iterator becomes ExpiredIteratorException saying what to do") {
    // Given / When
    val t = translate(
      serviceError(
        SdkExpiredIteratorException.builder(),
        400,
        "ExpiredIteratorException",
        "Iterator expired. The iterator was created at time ..."),
      Some("shardId-000000000003"))

    // Then
    t shouldBe an[ExpiredIteratorException]
    t.getMessage should include("shard 'shardId-000000000003' of stream 'orders'")
    t.getMessage should include("new iterator")
  }

  test("a missing stream or shard becomes ResourceMissingException pointing at the options to check") {
    // Given / When
    val t = translate(
      serviceError(
        ResourceNotFoundException.builder(),
        400,
        "ResourceNotFoundException",
        "Shard shardId-000000000007 in stream orders under account 123456789012 does not exist"),
      Some("shardId-000000000007"))

    // Then
    t shouldBe a[ResourceMissingException]
    Seq(
      "shard 'shardId-000000000007' of stream 'orders'",
      "kinesis.streamName",
      "kinesis.region",
      "kinesis.endpointUrl",
      "retention",
      "req-42").foreach(t.getMessage should include(_))
  }

  test("a refused permission becomes AccessException naming the permission and where credentials came from") {
    // Given an AccessDenied for credentials taken from the default chain
    val denied = serviceError(
      AccessDeniedException.builder(),
      400,
      "AccessDeniedException",
      "User: arn:aws:iam::123456789012:user/reader is not authorized to perform: kinesis:GetRecords")

    // When it is translated
    val t = translate(denied, errors = fromChain)

    // Then the message names the permission, the stream, and how to supply other credentials
    t shouldBe an[AccessException]
    Seq(
      "kinesis:GetRecords",
      "stream 'orders'",
      "default credentials chain",
      "kinesis.awsAccessKeyId",
      "kinesis.awsSecretKey",
      "req-42").foreach(t.getMessage should include(_))
  }

  test("rejected credentials become AccessException without echoing secrets or keeping the raw cause") {
    // Given a signature error whose text echoes the signed request, session token included
    val echo = s"The request signature we calculated does not match.\nx-amz-security-token:$token\nkey $secret"
    val failures = Seq(
      serviceError(KinesisException.builder(), 400, "InvalidSignatureException", echo),
      serviceError(KinesisException.builder(), 400, "UnrecognizedClientException", s"invalid token $token"),
      serviceError(KinesisException.builder(), 400, "ExpiredTokenException", "The security token has expired"))

    // When they are translated
    val translated = failures.map(f => translate(f))

    // Then each says the credentials were rejected and where they came from, and holds no secret
    translated.foreach { t =>
      t shouldBe an[AccessException]
      t.getMessage should include("credentials were rejected")
      t.getMessage should include("options kinesis.awsAccessKeyId and kinesis.awsSecretKey")
      t.getMessage should not include token
      t.getMessage should not include secret
      t.getCause shouldBe null
    }
  }

  test("KMS access denied asks for kms:Decrypt") {
    // Given / When
    val t = translate(serviceError(KmsAccessDeniedException.builder(), 400, "KMSAccessDeniedException", "denied"))

    // Then
    t shouldBe an[AccessException]
    t.getMessage should include("kms:Decrypt")
  }

  test("no credentials anywhere becomes AccessException listing both ways to provide them") {
    // Given the SDK's complaint when the default chain finds nothing
    val none = SdkClientException.create("Unable to load credentials from any of the providers in the chain " +
      "AwsCredentialsProviderChain(...)")

    // When / Then
    val t = translate(none, errors = fromChain)
    t shouldBe an[AccessException]
    Seq(
      "kinesis.awsAccessKeyId",
      "kinesis.awsSecretKey",
      "default credentials chain",
      "stream 'orders'",
      "Unable to load credentials").foreach(t.getMessage should include(_))
  }

  test("any other answer of Kinesis becomes a RequestRefusedException, any other failure a plain " +
    "KinesisClientException, with the SDK message, secrets scrubbed") {
    // Given an argument error and a connection failure, one of them quoting the secret key
    val invalid = serviceError(
      InvalidArgumentException.builder(),
      400,
      "InvalidArgumentException",
      s"Limit must be between 1 and 10000 ($secret)")
    val refused = SdkClientException.create("Unable to execute HTTP request: Connect to 127.0.0.1:1 failed")

    // When they are translated
    val (t1, t2) = (translate(invalid), translate(refused))

    // Then Kinesis' answer is a refusal, the connection failure a plain failure (it may pass), both naming the
    // stream, carrying the SDK text but not the secret
    t1.getClass shouldBe classOf[RequestRefusedException]
    t2.getClass shouldBe classOf[KinesisClientException]
    Seq(t1, t2).foreach(_.getMessage should include("GetRecords on stream 'orders' failed"))
    t1.getMessage should include("Limit must be between 1 and 10000 (<redacted>)")
    t1.getMessage should include("InvalidArgumentException, HTTP 400")
    t2.getMessage should include("Connect to 127.0.0.1:1 failed")
    t2.getCause shouldBe refused
  }

  test("signature and token errors of HTTP 400, and any error quoting a signed request, keep no token or signature " +
    "in their message or causes") {
    import SignedRequestErrors._
    // Given errors whose texts quote a request signed with a role's token (no option holds it)
    val failures = Seq(
      serviceError(KinesisException.builder(), 400, "IncompleteSignatureException", Mismatch),
      serviceError(KinesisException.builder(), 400, "MissingAuthenticationTokenException", Headers),
      serviceError(KinesisException.builder(), 400, "InvalidSignatureException", Mismatch),
      serviceError(KinesisException.builder(), 400, "ExpiredTokenException", Headers),
      serviceError(InternalFailureException.builder(), 500, "InternalFailure", Headers),
      serviceError(InvalidArgumentException.builder(), 400, "InvalidArgumentException", Mismatch),
      SdkClientException.builder().message(s"Unable to execute HTTP request: $Headers").build())

    // When they are translated
    val translated = failures.map(f => translate(f, errors = fromChain))

    // Then no text along the chain shows the token, the signature or the key id, and the 400s say what to check
    translated.foreach(t => withClue(allText(t))(clean(allText(t)) shouldBe true))
    translated.take(4).foreach { t =>
      t shouldBe an[AccessException]
      t.getMessage should include("credentials were rejected")
    }
  }

  test("an endpoint that refuses connections, does not resolve or has no route becomes UnreachableException " +
    "naming the endpoint and the option to check") {
    // Given the SDK's failures to connect, the Java cause somewhere down the chain
    def connectFailure(cause: Throwable) =
      SdkClientException.builder().message(s"Unable to execute HTTP request: ${cause.getMessage}").cause(cause).build()
    val failures = Seq(
      connectFailure(new java.net.ConnectException("Connect to 127.0.0.1:1 failed: Connection refused")),
      connectFailure(new java.io.IOException("wrapped", new java.net.UnknownHostException("kinesis.nowhere.invalid"))),
      connectFailure(new java.net.NoRouteToHostException("No route to host")))
    val atEndpoint = SdkErrors.of(chainSettings.copy(endpointUrl = Some(java.net.URI.create("http://127.0.0.1:1"))))

    // When they are translated
    val translated = failures.map(f => translate(f, errors = atEndpoint))

    // Then each says nothing answered at the endpoint and what to check
    translated.map(_.getClass) shouldBe Seq.fill(3)(classOf[UnreachableException])
    translated.foreach(_.getMessage should (include("Cannot reach Kinesis at http://127.0.0.1:1 (option " +
      "kinesis.endpointUrl)") and include("stream 'orders'")))
    translated.zip(Seq("connection was refused", "does not resolve", "no route to the host")).foreach {
      case (t, why) => t.getMessage should include(why)
    }
    // And without an endpoint option the regional AWS endpoint is named
    translate(failures.head, errors = fromChain).getMessage should include(
      "https://kinesis.us-east-1.amazonaws.com (the AWS endpoint of option kinesis.region)")
  }
}
