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
  require(
    maxDelayMs >= baseDelayMs,
    s"RetrySettings.maxDelayMs ($maxDelayMs) must be at least RetrySettings.baseDelayMs ($baseDelayMs)")
}

/**
 * The IAM role assumed on top of the base credentials (options `kinesis.stsRoleArn` and friends); `stsEndpoint` None
 * means the regional STS endpoint of the client's region. `toString` hides the external id, a shared secret.
 */
final case class AssumeRoleSettings(
    roleArn: String,
    sessionName: String,
    externalId: Option[String],
    stsEndpoint: Option[URI]) {
  override def toString: String =
    s"AssumeRoleSettings($roleArn, $sessionName, ${externalId.fold("None")(_ => "<redacted>")}, $stsEndpoint)"
}

/**
 * A user's credentials provider class (option `kinesis.credentialProviderClass`), built with `param` when given;
 * `toString` hides the parameter, which may hold a secret.
 */
final case class ProviderClassSettings(className: String, param: Option[String]) {
  override def toString: String = s"ProviderClassSettings($className${param.fold("")(_ => ", <redacted>")})"
}

/**
 * Everything needed to reach Kinesis, for the source's [[SdkKinesisClient]] and the sink's producer alike; shipped to
 * executors, hence serializable. `region` None means the SDK's default region chain, `credentials` None the SDK's
 * default credentials provider chain unless `providerClass` names another; `assumeRole` is a role assumed with those
 * base credentials. `verifyCertificate` false accepts any TLS certificate (local emulators only). Two clients with
 * equal settings are interchangeable, which is why caches key on these settings and never on resolved credentials.
 */
final case class ClientSettings(
    region: Option[String],
    endpointUrl: Option[URI],
    credentials: Option[AwsCredentials],
    retry: RetrySettings,
    verifyCertificate: Boolean = true,
    providerClass: Option[ProviderClassSettings] = None,
    assumeRole: Option[AssumeRoleSettings] = None)
    extends Serializable
