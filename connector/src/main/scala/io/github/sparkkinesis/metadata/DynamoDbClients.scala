package io.github.sparkkinesis.metadata

import java.net.URI
import java.util.concurrent.ConcurrentHashMap

import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.services.dynamodb.DynamoDbClient

import io.github.sparkkinesis.client.{ClientSettings, CredentialsProviders, SdkKinesisClient}

/**
 * One DynamoDB client per distinct Kinesis settings and DynamoDB endpoint in this JVM, shared by every task and
 * query of the executor: the same region, credentials (an assumed role included) and retries as Kinesis, keyed by
 * settings and never by resolved credentials. The clients live as long as the JVM.
 */
private[metadata] object DynamoDbClients {
  private val clients = new ConcurrentHashMap[(ClientSettings, Option[URI]), DynamoDbClient]()

  def apply(settings: ClientSettings, endpoint: Option[URI]): DynamoDbClient =
    clients.computeIfAbsent((settings, endpoint),
      new java.util.function.Function[(ClientSettings, Option[URI]), DynamoDbClient] {
        override def apply(key: (ClientSettings, Option[URI])): DynamoDbClient = build(settings, endpoint)
      })

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
}
