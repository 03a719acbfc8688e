package io.github.sparkkinesis.client

import software.amazon.awssdk.awscore.exception.AwsErrorDetails
import software.amazon.awssdk.services.kinesis.model.ProvisionedThroughputExceededException

/**
 * Kinesis Data Streams' documented per-shard read limits (bench/README.md names the AWS pages): polling, 5 GetRecords
 * calls per second and 2 MiB per second, a call returning at most 10,000 records or 10 MiB, and after a page of B bytes
 * every call for B / 2 MiB seconds throttled (a 10-MiB page: the next 5 s); enhanced fan-out, 2 MiB per second per
 * consumer and shard, a record pushed about 70 ms after it arrived, a subscription that ends after 5 minutes.
 */
final case class AwsLimits(
    callsPerSecond: Int = 5,
    readBytesPerSecond: Long = 2L << 20,
    maxPageRecords: Int = 10000,
    maxPageBytes: Long = 10L << 20,
    pushBytesPerSecond: Long = 2L << 20,
    pushDelayMs: Long = 70L,
    maxEventBytes: Long = 1L << 20,
    subscriptionMs: Long = 5 * 60 * 1000L,
    iteratorTtlMs: Long = 5 * 60 * 1000L)

object AwsLimits {

  /**
   * The connector's exception for a throttled GetRecords, made as the real client makes it: the SDK's
   * ProvisionedThroughputExceededException with AWS's status, code and message, translated by [[SdkErrors]].
   */
  def throttled(stream: String, shardId: String): KinesisClientException = {
    val message = s"Rate exceeded for shard $shardId in stream $stream under account ${FakeFanOut.Account}."
    val sdk = ProvisionedThroughputExceededException.builder()
      .statusCode(400)
      .requestId("limited-kinesis")
      .message(message)
      .awsErrorDetails(AwsErrorDetails.builder()
        .errorCode("ProvisionedThroughputExceededException")
        .errorMessage(message)
        .serviceName("Kinesis")
        .build())
      .build()
    Translator.translate(sdk, "GetRecords", stream, Some(shardId))
  }

  private val Translator = new SdkErrors("(in-process Kinesis, no credentials)", Nil, "the in-process Kinesis")
}
