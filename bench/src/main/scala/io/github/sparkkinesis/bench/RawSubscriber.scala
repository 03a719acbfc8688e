package io.github.sparkkinesis.bench

import java.net.URI
import java.util.concurrent.CompletableFuture

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.http.{Protocol, ProtocolNegotiation, SdkHttpConfigurationOption}
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{
  DeregisterStreamConsumerRequest,
  DescribeStreamConsumerRequest,
  DescribeStreamSummaryRequest,
  RegisterStreamConsumerRequest,
  ShardIteratorType,
  StartingPosition,
  SubscribeToShardEvent,
  SubscribeToShardRequest,
  SubscribeToShardResponseHandler
}
import software.amazon.awssdk.utils.AttributeMap

import io.github.sparkkinesis.it.{KinesisMock, TestStreams}

/**
 * A plain SDK v2 enhanced fan-out reader, the baseline of the fan-out benchmarks: an unshaded `KinesisAsyncClient` on
 * Netty (HTTP/2 with ALPN, the emulator's self-signed certificate trusted), a consumer of its own, and one subscription
 * per shard handing every event to a callback.
 */
object RawSubscriber {

  lazy val client: KinesisAsyncClient = KinesisAsyncClient.builder()
    .endpointOverride(URI.create(KinesisMock.tlsEndpoint))
    .region(Region.of(TestStreams.Region))
    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
      TestStreams.AccessKeyId,
      TestStreams.SecretKey)))
    .httpClient(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP2).protocolNegotiation(ProtocolNegotiation.ALPN)
      .buildWithDefaults(AttributeMap.builder().put(
        SdkHttpConfigurationOption.TRUST_ALL_CERTIFICATES,
        java.lang.Boolean.TRUE).build()))
    .build()

  /**
   * Runs `body` with the ARN of a consumer registered on `stream` and ACTIVE, and the seconds that registering and
   * waiting for it took; deregisters it afterwards.
   */
  def withConsumer[T](stream: String, name: String)(body: (String, Double) => T): T = {
    val started = System.nanoTime()
    val streamArn = client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
      .get().streamDescriptionSummary.streamARN
    val consumerArn = client.registerStreamConsumer(RegisterStreamConsumerRequest.builder().streamARN(streamArn)
      .consumerName(name).build()).get().consumer.consumerARN
    while (client.describeStreamConsumer(DescribeStreamConsumerRequest.builder().consumerARN(consumerArn).build()).get()
        .consumerDescription.consumerStatusAsString != "ACTIVE") Thread.sleep(50)
    try body(consumerArn, (System.nanoTime() - started) / 1e9)
    finally
      client.deregisterStreamConsumer(DeregisterStreamConsumerRequest.builder().consumerARN(consumerArn).build()).get()
  }

  /** Subscribes to `shardId` from TRIM_HORIZON; `onEvent` sees every event, `onError` a failure. */
  def subscribe(
      consumerArn: String,
      shardId: String,
      onEvent: SubscribeToShardEvent => Unit,
      onError: Throwable => Unit): CompletableFuture[Void] = {
    val handler = SubscribeToShardResponseHandler.builder()
      .onError(e => onError(e))
      .subscriber(SubscribeToShardResponseHandler.Visitor.builder().onSubscribeToShardEvent(e => onEvent(e)).build())
      .build()
    client.subscribeToShard(
      SubscribeToShardRequest.builder().consumerARN(consumerArn).shardId(shardId)
        .startingPosition(StartingPosition.builder().`type`(ShardIteratorType.TRIM_HORIZON).build()).build(),
      handler)
  }
}
