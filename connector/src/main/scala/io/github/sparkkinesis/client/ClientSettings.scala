package io.github.sparkkinesis.client

import java.net.URI

/** Static AWS credentials; `toString` never shows them, so settings can be logged safely. */
final case class AwsCredentials(accessKeyId: String, secretKey: String, sessionToken: Option[String]) {
  override def toString: String = "AwsCredentials(<redacted>)"
}

/**
 * How often the SDK retries one failed call before it reaches the connector: up to `numRetries` times, waiting an
 * exponentially growing, jittered delay that starts at `baseDelayMs` and never exceeds `maxDelayMs`.
 */
final case class RetrySettings(numRetries: Int, baseDelayMs: Long, maxDelayMs: Long) {
  require(numRetries >= 0, s"RetrySettings.numRetries must be 0 or more, got $numRetries")
  require(baseDelayMs > 0, s"RetrySettings.baseDelayMs must be positive, got $baseDelayMs")
  require(maxDelayMs >= baseDelayMs,
    s"RetrySettings.maxDelayMs ($maxDelayMs) must be at least RetrySettings.baseDelayMs ($baseDelayMs)")
}

/**
 * Everything needed to reach Kinesis, for the source's [[SdkKinesisClient]] and the sink's producer alike; shipped
 * to executors, hence serializable. `region` None means the SDK's default region chain, `credentials` None the SDK's
 * default credentials provider chain; `verifyCertificate` false accepts any TLS certificate (local emulators only).
 */
final case class ClientSettings(
    region: Option[String],
    endpointUrl: Option[URI],
    credentials: Option[AwsCredentials],
    retry: RetrySettings,
    verifyCertificate: Boolean = true)
  extends Serializable
