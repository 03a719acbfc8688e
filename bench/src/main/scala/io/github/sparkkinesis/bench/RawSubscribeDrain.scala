package io.github.sparkkinesis.bench

import java.net.URI
import java.security.MessageDigest
import java.util.concurrent.{CompletableFuture, CountDownLatch, TimeUnit}

import scala.collection.JavaConverters._

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.http.{Protocol, ProtocolNegotiation, SdkHttpConfigurationOption}
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{
  DeregisterStreamConsumerRequest, DescribeStreamConsumerRequest, DescribeStreamSummaryRequest,
  RegisterStreamConsumerRequest, ShardIteratorType, StartingPosition, SubscribeToShardEvent, SubscribeToShardRequest,
  SubscribeToShardResponseHandler
}
import software.amazon.awssdk.utils.AttributeMap

import io.github.sparkkinesis.it.{KinesisMock, TestStreams}

/**
 * A plain SDK v2 enhanced fan-out reader (unshaded `KinesisAsyncClient` on Netty, HTTP/2 with ALPN, the emulator's
 * self-signed certificate trusted) draining the backlog: a consumer of its own, one subscription per shard from
 * TRIM_HORIZON, all shards at once, each done at the first event that says MillisBehindLatest 0. Timed from the
 * first subscribe (the consumer is registered and ACTIVE before) to the last shard done.
 */
object RawSubscribeDrain {

  lazy val client: KinesisAsyncClient = KinesisAsyncClient.builder()
    .endpointOverride(URI.create(KinesisMock.tlsEndpoint))
    .region(Region.of(TestStreams.Region))
    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(TestStreams.AccessKeyId, TestStreams.SecretKey)))
    .httpClient(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP2).protocolNegotiation(ProtocolNegotiation.ALPN)
      .buildWithDefaults(AttributeMap.builder().put(SdkHttpConfigurationOption.TRUST_ALL_CERTIFICATES, java.lang.Boolean.TRUE).build()))
    .build()

  def run(backlog: Backlog): DrainResult = {
    val streamArn = client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(backlog.stream).build())
      .get().streamDescriptionSummary.streamARN
    val consumerArn = client.registerStreamConsumer(RegisterStreamConsumerRequest.builder().streamARN(streamArn)
      .consumerName("bench-raw").build()).get().consumer.consumerARN
    while (client.describeStreamConsumer(DescribeStreamConsumerRequest.builder().consumerARN(consumerArn).build()).get()
      .consumerDescription.consumerStatusAsString != "ACTIVE") Thread.sleep(50)
    try {
      val started = System.nanoTime()
      val done = new CountDownLatch(backlog.shardIds.size)
      val counts = backlog.shardIds.map(_ => new RawDrain.Counts)
      val kinesisRecords = new java.util.concurrent.atomic.AtomicLong()
      val calls = backlog.shardIds.zip(counts).map { case (shardId, count) => subscribe(consumerArn, shardId, count, kinesisRecords, done) }
      if (!done.await(10, TimeUnit.MINUTES)) throw new IllegalStateException("the raw subscriptions did not catch up in 10 minutes")
      val seconds = (System.nanoTime() - started) / 1e9
      calls.foreach(_.cancel(true))
      DrainResult(counts.map(_.userRecords).sum, kinesisRecords.get(), seconds)
    } finally {
      client.deregisterStreamConsumer(DeregisterStreamConsumerRequest.builder().consumerARN(consumerArn).build()).get()
    }
  }

  private def subscribe(consumerArn: String, shardId: String, counts: RawDrain.Counts,
      kinesisRecords: java.util.concurrent.atomic.AtomicLong, done: CountDownLatch): CompletableFuture[Void] = {
    val md5 = MessageDigest.getInstance("MD5")
    var finished = false
    val handler = SubscribeToShardResponseHandler.builder()
      .onError(e => if (!finished) System.err.println(s"bench: raw subscription to $shardId failed: $e"))
      .subscriber(SubscribeToShardResponseHandler.Visitor.builder().onSubscribeToShardEvent { (e: SubscribeToShardEvent) =>
        e.records.asScala.foreach { r =>
          kinesisRecords.incrementAndGet()
          RawDrain.deaggregate(r.data.asByteArray, r.partitionKey, md5, counts)
        }
        if (!finished && e.millisBehindLatest == 0L) {
          finished = true
          done.countDown()
        }
      }.build())
      .build()
    client.subscribeToShard(SubscribeToShardRequest.builder().consumerARN(consumerArn).shardId(shardId)
      .startingPosition(StartingPosition.builder().`type`(ShardIteratorType.TRIM_HORIZON).build()).build(), handler)
  }
}
