package io.github.sparkkinesis.client

import software.amazon.awssdk.auth.credentials.{
  AwsBasicCredentials, AwsCredentialsProvider, AwsSessionCredentials, DefaultCredentialsProvider,
  StaticCredentialsProvider
}

/** The one place credentials options become an SDK credentials provider, for the source's client and the sink's KPL. */
private[sparkkinesis] object CredentialsProviders {

  /** Static credentials when the options give them, otherwise the SDK's default credentials provider chain. */
  def of(credentials: Option[AwsCredentials]): AwsCredentialsProvider = credentials match {
    case Some(AwsCredentials(key, secret, Some(token))) =>
      StaticCredentialsProvider.create(AwsSessionCredentials.create(key, secret, token))
    case Some(AwsCredentials(key, secret, None)) =>
      StaticCredentialsProvider.create(AwsBasicCredentials.create(key, secret))
    case None =>
      DefaultCredentialsProvider.builder().build()
  }
}
