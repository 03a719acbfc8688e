package io.github.sparkkinesis.client

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.awscore.exception.AwsErrorDetails
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.retries.api.{
  AcquireInitialTokenRequest,
  RefreshRetryTokenRequest,
  RetryToken,
  TokenAcquisitionFailedException
}
import software.amazon.awssdk.services.kinesis.model.{
  ExpiredIteratorException => SdkExpired,
  ProvisionedThroughputExceededException
}

/** The parts of [[SdkKinesisClient]] that need no Kinesis; calls against an emulator are integration tests. */
class SdkKinesisClientSuite extends AnyFunSuite with Matchers {

  private val noChainRegion: () => Region = () => throw SdkClientException.create("Unable to load region")

  test("a configured region is trimmed and lower-cased, and wins over the default chain") {
    // Given / When
    val region = SdkKinesisClient.resolveRegion(Some(" EU-West-1 "), hasEndpoint = false, () => Region.US_EAST_1)

    // Then
    region shouldBe Region.EU_WEST_1
  }

  test("a region option that is no region name is refused, naming the option") {
    // Given / When
    val e = the[KinesisClientException] thrownBy
      SdkKinesisClient.resolveRegion(
        Some("https://kinesis.us-east-1.amazonaws.com"),
        hasEndpoint = false,
        noChainRegion)

    // Then
    e.getMessage should include("kinesis.region")
    e.getMessage should include("us-east-1")
  }

  test("without a region option the default chain decides; if it has none, the error says to set kinesis.region") {
    // Given / When
    val fromChain = SdkKinesisClient.resolveRegion(None, hasEndpoint = true, () => Region.AP_SOUTHEAST_2)
    val withEndpoint =
      the[KinesisClientException] thrownBy SdkKinesisClient.resolveRegion(None, hasEndpoint = true, noChainRegion)
    val withoutEndpoint = the[KinesisClientException] thrownBy
      SdkKinesisClient.resolveRegion(None, hasEndpoint = false, noChainRegion)

    // Then
    fromChain shouldBe Region.AP_SOUTHEAST_2
    Seq(withEndpoint, withoutEndpoint).foreach(_.getMessage should include("set option kinesis.region"))
    withEndpoint.getMessage should include("kinesis.endpointUrl")
    withoutEndpoint.getMessage should not include "kinesis.endpointUrl"
  }

  test("the retry strategy retries throttling numRetries times within the maximum delay, and not expired iterators") {
    // Given a strategy allowing 2 retries with delays up to 400 ms
    val strategy = SdkKinesisClient.retryStrategy(RetrySettings(numRetries = 2, baseDelayMs = 100, maxDelayMs = 400))
    val throttled = ProvisionedThroughputExceededException.builder().statusCode(400)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode("ProvisionedThroughputExceededException").build()).build()
    def refresh(token: RetryToken, failure: Throwable) =
      strategy.refreshRetryToken(RefreshRetryTokenRequest.builder().token(token).failure(failure).build())
    def firstToken() = strategy.acquireInitialToken(AcquireInitialTokenRequest.create("kinesis")).token

    // When one call is throttled three times in a row
    val first = refresh(firstToken(), throttled)
    val second = refresh(first.token, throttled)

    // Then two retries are granted, each after at most the maximum delay, and the third failure is final
    strategy.maxAttempts shouldBe 3
    Seq(first, second).foreach(_.delay.toMillis should (be >= 0L and be <= 400L))
    a[TokenAcquisitionFailedException] should be thrownBy refresh(second.token, throttled)
    // And an expired iterator is never retried by the SDK: the reader must get a new iterator
    a[TokenAcquisitionFailedException] should be thrownBy
      refresh(
        firstToken(),
        SdkExpired.builder().statusCode(400)
          .awsErrorDetails(AwsErrorDetails.builder().errorCode("ExpiredIteratorException").build()).build())
  }

  test("millisBehindLatest: the reported value, else 0 for an empty batch, else the age of the last record") {
    // Given
    val records = Seq(KinesisRecord(Array[Byte](1), "k", "1", 1000L), KinesisRecord(Array[Byte](2), "k", "2", 4000L))

    // When / Then
    SdkKinesisClient.millisBehind(Some(25L), records, nowMillis = 9000L) shouldBe 25L
    SdkKinesisClient.millisBehind(None, Nil, nowMillis = 9000L) shouldBe 0L
    SdkKinesisClient.millisBehind(None, records, nowMillis = 9000L) shouldBe 5000L
    SdkKinesisClient.millisBehind(None, records, nowMillis = 3000L) shouldBe 0L // clock behind the server
  }

  test("a client builds and closes without any network call, with or without static credentials") {
    // Given settings for a local endpoint (nothing listens there; nothing is sent)
    val endpoint = Some(URI.create("http://127.0.0.1:1"))
    val static = ClientSettings(
      Some("us-east-1"),
      endpoint,
      Some(AwsCredentials("AKID", "SECRET", Some("TOKEN"))),
      RetrySettings(0, 10, 10))
    val chain = static.copy(credentials = None)

    // When / Then building needs no ServiceLoader discovery of an HTTP client, and close releases everything
    Seq(static, chain).foreach(settings => new SdkKinesisClient(settings).close())
  }
}
