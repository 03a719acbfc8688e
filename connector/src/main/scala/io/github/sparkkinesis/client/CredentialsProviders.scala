package io.github.sparkkinesis.client

import software.amazon.awssdk.auth.credentials.{
  AwsBasicCredentials,
  AwsCredentialsProvider,
  AwsSessionCredentials,
  DefaultCredentialsProvider,
  StaticCredentialsProvider
}

/**
 * The one place credentials options become an SDK credentials provider, for the source's client, the sink's KPL and the
 * DynamoDB metadata store alike. The base credentials are the static keys, else the user's provider class, else the
 * SDK's default chain (environment, system properties, profiles, web identity, container and instance roles); with
 * `kinesis.stsRoleArn` a role is assumed with them and refreshed before it expires.
 */
private[sparkkinesis] object CredentialsProviders {

  /** A new provider for `settings`; the caller closes it (when it is [[AutoCloseable]]) with its client. */
  def of(settings: ClientSettings): AwsCredentialsProvider = {
    val base = baseOf(settings)
    settings.assumeRole match {
      case None => base
      case Some(role) =>
        new AssumedRoleProvider(role, base, SdkKinesisClient.region(settings), AssumedRoleProvider.Refresh.Default)
    }
  }

  /** The values no message may show: the secret key, the session token, the provider's parameter, the external id. */
  def secrets(settings: ClientSettings): Seq[String] =
    settings.credentials.toSeq.flatMap(c => c.secretKey +: c.sessionToken.toSeq) ++
      settings.providerClass.flatMap(_.param).toSeq ++ settings.assumeRole.flatMap(_.externalId).toSeq

  /** Where the credentials come from, in words naming the options, for error messages. */
  def origin(settings: ClientSettings): String = {
    val base =
      if (settings.credentials.isDefined) "options kinesis.awsAccessKeyId and kinesis.awsSecretKey"
      else settings.providerClass.fold("the AWS default credentials chain")(p =>
        s"option kinesis.credentialProviderClass (${p.className})")
    val others = if (settings.credentials.isDefined || settings.providerClass.isDefined) ""
    else "; set options " +
      "kinesis.awsAccessKeyId and kinesis.awsSecretKey, or kinesis.credentialProviderClass, to use others"
    settings.assumeRole.fold(s"The credentials came from $base$others.")(role =>
      s"The credentials are those of role ${role.roleArn} (option kinesis.stsRoleArn), assumed with the " +
        s"credentials of $base.")
  }

  private def baseOf(settings: ClientSettings): AwsCredentialsProvider = settings.credentials match {
    case Some(AwsCredentials(key, secret, Some(token))) =>
      StaticCredentialsProvider.create(AwsSessionCredentials.create(key, secret, token))
    case Some(AwsCredentials(key, secret, None)) =>
      StaticCredentialsProvider.create(AwsBasicCredentials.create(key, secret))
    case None =>
      settings.providerClass.fold[AwsCredentialsProvider](DefaultCredentialsProvider.builder().build())(
        UserCredentialsProvider.load)
  }
}
