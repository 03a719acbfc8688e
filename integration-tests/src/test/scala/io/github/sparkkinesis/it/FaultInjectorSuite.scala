package io.github.sparkkinesis.it

import java.io.{BufferedReader, File, InputStreamReader}
import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.{KinesisClient => AwsKinesisClient}
import software.amazon.awssdk.services.kinesis.model.{
  GetRecordsRequest,
  ListShardsRequest,
  ProvisionedThroughputExceededException
}

import io.github.sparkkinesis.client.{
  AwsCredentials,
  ClientSettings,
  RetrySettings,
  SdkKinesisClient,
  ThrottledException
}

/**
 * The cluster fault tests' injector (python/cluster_tests/fault_injector.py) throttles as AWS does, as the Java SDK
 * sees it: its CBOR error bodies and `x-amzn-ErrorType` header make a throttling exception the SDK and the connector's
 * client recognise (an error body in JSON would be an unknown 400 to a CBOR client).
 */
class FaultInjectorSuite extends AnyFunSuite with Matchers with BeforeAndAfterAll {

  private var injector: Process = _
  private var endpoint: String = _

  override def beforeAll(): Unit = {
    val script = new File(sys.props("sparkkinesis.projectRoot"), "python/cluster_tests/fault_injector.py")
    val upstream = URI.create(KinesisMock.endpoint).getPort
    injector =
      new ProcessBuilder("python3", script.getPath, "--upstream-port", upstream.toString, "--storm-fraction", "1")
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start()
    // The injector prints its port once it listens: a bounded read of one line, not a sleep.
    val line = new BufferedReader(new InputStreamReader(injector.getInputStream, UTF_8)).readLine()
    require(line != null && line.startsWith("port "), s"the fault injector did not start (it printed: $line)")
    endpoint = s"http://127.0.0.1:${line.stripPrefix("port ").trim}"
  }

  override def afterAll(): Unit = if (injector != null) {
    injector.getOutputStream.close() // its signal to stop
    if (!injector.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) injector.destroyForcibly()
  }

  private def sdk(): AwsKinesisClient = AwsKinesisClient.builder()
    .endpointOverride(URI.create(endpoint))
    .region(Region.of(TestStreams.Region))
    .credentialsProvider(
      StaticCredentialsProvider.create(AwsBasicCredentials.create(TestStreams.AccessKeyId, TestStreams.SecretKey)))
    .httpClientBuilder(ApacheHttpClient.builder())
    .overrideConfiguration(b => b.retryStrategy(software.amazon.awssdk.awscore.retry.AwsRetryStrategy.doNotRetry()))
    .build()

  test("Given a throttling injector, when the SDK calls GetRecords over CBOR, then it sees a throttling exception") {
    val client = sdk()
    try {
      // When
      val thrown = intercept[ProvisionedThroughputExceededException] {
        client.getRecords(GetRecordsRequest.builder().shardIterator("AAAA").build())
      }
      // Then
      thrown.isThrottlingException shouldBe true
      thrown.statusCode shouldBe 400
      thrown.awsErrorDetails.errorCode shouldBe "ProvisionedThroughputExceededException"
      thrown.getMessage should include("injected")
    } finally client.close()
  }

  test("Given a throttling injector, when the SDK calls ListShards, then it sees LimitExceededException, HTTP 400") {
    val client = sdk()
    try {
      val thrown = intercept[software.amazon.awssdk.services.kinesis.model.LimitExceededException] {
        client.listShards(ListShardsRequest.builder().streamName("any").build())
      }
      // The SDK's own throttling list leaves LimitExceeded out, as for AWS's answer; the connector's client counts it
      // as throttling (the next test).
      thrown.statusCode shouldBe 400
      thrown.awsErrorDetails.errorCode shouldBe "LimitExceededException"
    } finally client.close()
  }

  test("Given a throttling injector, when the connector's client reads, then it raises ThrottledException") {
    // Given the connector's own client, retries off, through the injector
    val stream = TestStreams.createStream("it-injector", shards = 1)
    val settings = ClientSettings(
      region = Some(TestStreams.Region),
      endpointUrl = Some(URI.create(endpoint)),
      credentials = Some(AwsCredentials(TestStreams.AccessKeyId, TestStreams.SecretKey, None)),
      retry = RetrySettings(numRetries = 0, baseDelayMs = 10, maxDelayMs = 10))
    val client = new SdkKinesisClient(settings)
    try {
      // When / Then: both the control call and the read are throttled, and named so
      val listing = intercept[ThrottledException](client.listShards(stream))
      listing.getMessage should include("LimitExceededException")
      val read = intercept[ThrottledException](client.getRecords(stream, "AAAA", 10))
      read.getMessage should include("ProvisionedThroughputExceededException")
    } finally client.close()
  }
}
