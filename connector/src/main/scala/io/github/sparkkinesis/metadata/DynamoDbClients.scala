package io.github.sparkkinesis.metadata

import java.net.URI

import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.services.dynamodb.DynamoDbClient

import io.github.sparkkinesis.client.{ClientSettings, CredentialsProviders, IdleCache, IdleSweeper, SdkKinesisClient}

/** Lends the DynamoDB store a client for the length of one call; serializable, so stores carry it to executors. */
private[sparkkinesis] trait DynamoDbAccess extends Serializable {
  def use[T](settings: ClientSettings, endpoint: Option[URI])(call: DynamoDbClient => T): T
}

/**
 * One DynamoDB client per distinct Kinesis settings and DynamoDB endpoint in this JVM, shared by every task and query
 * of the executor: the same region, credentials (an assumed role included) and retries as Kinesis, keyed by settings
 * and never by resolved credentials. A client unused for [[IdleSweeper.IdleMs]] is closed and forgotten (a query
 * stopped, or its credentials options changed), so rotated credentials never pile clients up.
 */
private[metadata] object DynamoDbClients extends DynamoDbAccess {

  @transient private lazy val clients = {
    val cache = new IdleCache[(ClientSettings, Option[URI]), DynamoDbClient](
      { case (settings, endpoint) => build(settings, endpoint) },
      _.close(),
      IdleSweeper.IdleMs,
      () => System.currentTimeMillis())
    IdleSweeper.start("spark-kinesis-idle-dynamodb")(() => cache.sweep())
    cache
  }

  override def use[T](settings: ClientSettings, endpoint: Option[URI])(call: DynamoDbClient => T): T =
    clients.use((settings, endpoint))(call)

  private def build(settings: ClientSettings, endpoint: Option[URI]): DynamoDbClient = {
    val builder = DynamoDbClient.builder()
      .region(SdkKinesisClient.region(settings))
      .credentialsProvider(CredentialsProviders.of(settings))
      .overrideConfiguration(ClientOverrideConfiguration.builder()
        .retryStrategy(SdkKinesisClient.retryStrategy(settings.retry)).build())
      // Named, not discovered: the SDK's ServiceLoader discovery of HTTP clients breaks in the relocated JAR.
      .httpClientBuilder(ApacheHttpClient.builder())
    endpoint.foreach(builder.endpointOverride)
    builder.build()
  }

  private def readResolve(): AnyRef = DynamoDbClients
}
