package io.github.sparkkinesis.client

import java.time.{Duration, Instant}
import java.util.concurrent.{CompletableFuture, CompletionException, ExecutionException, LinkedBlockingQueue, TimeUnit}

import io.github.sparkkinesis.compat.JavaCollections._

import org.reactivestreams.{Subscriber, Subscription}
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.{Protocol, ProtocolNegotiation, SdkHttpConfigurationOption}
import software.amazon.awssdk.http.async.SdkAsyncHttpClient
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{
  Consumer,
  ConsumerDescription => SdkConsumerDescription,
  DeregisterStreamConsumerRequest,
  DescribeStreamConsumerRequest,
  DescribeStreamSummaryRequest,
  ListStreamConsumersRequest,
  ListTagsForResourceRequest,
  RegisterStreamConsumerRequest,
  ResourceNotFoundException,
  ShardIteratorType,
  StartingPosition,
  SubscribeToShardEvent,
  SubscribeToShardEventStream,
  SubscribeToShardRequest,
  SubscribeToShardResponseHandler,
  TagResourceRequest
}
import software.amazon.awssdk.utils.AttributeMap

/**
 * [[FanOutClient]] on the AWS SDK v2's asynchronous Kinesis client over Netty's HTTP/2, which SubscribeToShard needs.
 * TLS negotiates HTTP/2 with ALPN (Java 9 and later have it built in; no native library is involved).
 */
private[client] final class SdkFanOutClient(
    settings: ClientSettings,
    region: Region,
    credentials: AwsCredentialsProvider,
    errors: SdkErrors) extends FanOutClient with AutoCloseable {
  import SdkFanOutClient._

  private val sdk: KinesisAsyncClient = {
    val builder = KinesisAsyncClient.builder()
      .region(region)
      .credentialsProvider(credentials)
      .overrideConfiguration(ClientOverrideConfiguration.builder()
        .retryStrategy(SdkKinesisClient.retryStrategy(settings.retry)).build())
      .httpClientBuilder(new NettyBuilder(settings.verifyCertificate))
    settings.endpointUrl.foreach(builder.endpointOverride)
    builder.build()
  }

  override def streamArn(stream: String): String = call("DescribeStreamSummary", stream, None) {
    sdk.describeStreamSummary(describeStreamSummaryRequest(stream))
  }.streamDescriptionSummary.streamARN

  override def describeConsumer(streamArn: String, consumerName: String): Option[ConsumerDescription] =
    describe(
      StreamRef.nameOf(streamArn),
      DescribeStreamConsumerRequest.builder().streamARN(streamArn).consumerName(consumerName))

  override def describeConsumerByArn(consumerArn: String): Option[ConsumerDescription] =
    describe(StreamRef.nameOf(consumerArn), DescribeStreamConsumerRequest.builder().consumerARN(consumerArn))

  override def registerConsumer(
      streamArn: String,
      consumerName: String,
      tags: Map[String, String]): ConsumerDescription = {
    val request = RegisterStreamConsumerRequest.builder().streamARN(streamArn).consumerName(consumerName)
    if (tags.nonEmpty) request.tags(tags.asJava)
    toConsumer(call("RegisterStreamConsumer", StreamRef.nameOf(streamArn), None) {
      sdk.registerStreamConsumer(request.build())
    }.consumer)
  }

  override def listConsumers(streamArn: String): Seq[ConsumerDescription] = {
    val consumers = Vector.newBuilder[ConsumerDescription]
    var token: Option[String] = None
    var more = true
    while (more) {
      val request = ListStreamConsumersRequest.builder().streamARN(streamArn)
      token.foreach(request.nextToken)
      val page = call("ListStreamConsumers", StreamRef.nameOf(streamArn), None) {
        sdk.listStreamConsumers(request.build())
      }
      consumers ++= page.consumers.asScala.map(toConsumer)
      // kinesis-mock answers a token on the last page too: a page without consumers, or the same token, ends it.
      val next = Option(page.nextToken).filter(t => page.consumers.asScala.nonEmpty && !token.contains(t))
      more = next.isDefined
      token = next
    }
    consumers.result()
  }

  override def consumerTags(consumerArn: String): Map[String, String] =
    call("ListTagsForResource", StreamRef.nameOf(consumerArn), None) {
      sdk.listTagsForResource(ListTagsForResourceRequest.builder().resourceARN(consumerArn).build())
    }.tags.asScala.map(t => t.key -> Option(t.value).getOrElse("")).toMap

  override def tagConsumer(consumerArn: String, tags: Map[String, String]): Unit = {
    call("TagResource", StreamRef.nameOf(consumerArn), None) {
      sdk.tagResource(TagResourceRequest.builder().resourceARN(consumerArn).tags(tags.asJava).build())
    }
    ()
  }

  override def deregisterConsumer(consumerArn: String): Unit = {
    call("DeregisterStreamConsumer", StreamRef.nameOf(consumerArn), None) {
      sdk.deregisterStreamConsumer(DeregisterStreamConsumerRequest.builder().consumerARN(consumerArn).build())
    }
    ()
  }

  override def subscribeToShard(consumerArn: String, shardId: String, start: IteratorStart): ShardSubscription = {
    val subscription =
      new SdkSubscription(e => errors.translate(e, "SubscribeToShard", StreamRef.nameOf(consumerArn), Some(shardId)))
    val request = SubscribeToShardRequest.builder().consumerARN(consumerArn).shardId(shardId)
      .startingPosition(startingPosition(start)).build()
    val handler = SubscribeToShardResponseHandler.builder()
      .subscriber(() => subscription.subscriber)
      .onError(e => subscription.fail(e))
      .build()
    subscription.started(sdk.subscribeToShard(request, handler))
    subscription
  }

  override def close(): Unit = sdk.close()

  private def describe(stream: String, request: DescribeStreamConsumerRequest.Builder): Option[ConsumerDescription] =
    try Some(toConsumer(call("DescribeStreamConsumer", stream, None)(sdk.describeStreamConsumer(request.build()))
        .consumerDescription))
    catch { case _: ResourceMissingException => None }

  private def call[T](
      operation: String,
      streamName: String,
      shardId: Option[String])(body: => CompletableFuture[T]): T =
    try body.get()
    catch {
      case e: InterruptedException => throw e
      case e: ExecutionException => throw errors.translate(unwrap(e), operation, streamName, shardId)
      case e: CompletionException => throw errors.translate(unwrap(e), operation, streamName, shardId)
    }
}

private[client] object SdkFanOutClient {

  /**
   * DescribeStreamSummary of a stream given by name or ARN: an ARN goes in StreamARN (AWS refuses one as StreamName,
   * and a stream of another account is reachable only by its ARN).
   */
  def describeStreamSummaryRequest(stream: String): DescribeStreamSummaryRequest = {
    val request = DescribeStreamSummaryRequest.builder()
    (if (StreamRef.isArn(stream)) request.streamARN(stream) else request.streamName(stream)).build()
  }

  private def unwrap(e: Throwable): Throwable = e match {
    case _: CompletionException | _: ExecutionException if e.getCause != null => unwrap(e.getCause)
    case other => other
  }

  private def startingPosition(start: IteratorStart): StartingPosition = {
    val b = StartingPosition.builder()
    (start match {
      case IteratorStart.TrimHorizon => b.`type`(ShardIteratorType.TRIM_HORIZON)
      case IteratorStart.Latest => b.`type`(ShardIteratorType.LATEST)
      case IteratorStart.AtTimestamp(ms) => b.`type`(ShardIteratorType.AT_TIMESTAMP).timestamp(Instant.ofEpochMilli(ms))
      case IteratorStart.AtSequenceNumber(s) => b.`type`(ShardIteratorType.AT_SEQUENCE_NUMBER).sequenceNumber(s)
      case IteratorStart.AfterSequenceNumber(s) => b.`type`(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(s)
    }).build()
  }

  private def toConsumer(c: Consumer): ConsumerDescription =
    ConsumerDescription(
      c.consumerName,
      c.consumerARN,
      c.consumerStatusAsString,
      c.consumerCreationTimestamp.toEpochMilli)

  private def toConsumer(c: SdkConsumerDescription): ConsumerDescription =
    ConsumerDescription(
      c.consumerName,
      c.consumerARN,
      c.consumerStatusAsString,
      c.consumerCreationTimestamp.toEpochMilli)

  /**
   * Netty over HTTP/2 with ALPN: kinesis-mock (and any TLS endpoint that offers both) answers the SDK's default, which
   * assumes HTTP/2 without negotiating, by closing the channel. `verifyCertificate` false (option
   * kinesis.verifyCertificate, for emulators only) accepts any certificate, as the polling client does.
   */
  private final class NettyBuilder(verifyCertificate: Boolean) extends SdkAsyncHttpClient.Builder[NettyBuilder] {
    override def buildWithDefaults(defaults: AttributeMap): SdkAsyncHttpClient = {
      val netty = NettyNioAsyncHttpClient.builder()
        .protocol(Protocol.HTTP2)
        .protocolNegotiation(ProtocolNegotiation.ALPN)
        .maxConcurrency(Integer.valueOf(MaxStreams))
        .readTimeout(Duration.ofMinutes(6)) // a subscription may sit quiet between events; it ends within 5 minutes
      val trust = AttributeMap.builder()
        .put(SdkHttpConfigurationOption.TRUST_ALL_CERTIFICATES, java.lang.Boolean.valueOf(!verifyCertificate)).build()
      netty.buildWithDefaults(trust.merge(defaults))
    }
  }

  /** Open subscriptions (HTTP/2 streams) one executor may hold at once, plus room for consumer calls. */
  private val MaxStreams = 2000

  /** Events asked for ahead of the reader, so a few arrive while a batch is planned; each holds at most 2 MB-ish. */
  private val Prefetch = 3L

  /** Bridges the SDK's pushed event stream to a reader that pulls, asking for more only as it takes events. */
  private final class SdkSubscription(translate: Throwable => KinesisClientException) extends ShardSubscription {
    private val signals = new LinkedBlockingQueue[SubscriptionSignal]()
    @volatile private var upstream: Option[Subscription] = None
    @volatile private var future: Option[CompletableFuture[Void]] = None
    @volatile private var cancelled = false

    val subscriber: Subscriber[SubscribeToShardEventStream] = new Subscriber[SubscribeToShardEventStream] {
      override def onSubscribe(s: Subscription): Unit = {
        upstream = Some(s)
        if (cancelled) s.cancel() else s.request(Prefetch)
      }
      override def onNext(event: SubscribeToShardEventStream): Unit = event match {
        case e: SubscribeToShardEvent =>
          signals.put(SubscriptionSignal.Event(
            records = e.records.asScala.map(SdkKinesisClient.toRecord).toVector,
            continuationSequenceNumber = Option(e.continuationSequenceNumber),
            millisBehindLatest = Option(e.millisBehindLatest).map(_.longValue).getOrElse(0L),
            childShardIds = Option(e.childShards).map(_.asScala.map(_.shardId).toVector).getOrElse(Vector.empty)))
        case _ => upstream.foreach(_.request(1)) // not an event of records: ask for the next one instead
      }
      override def onError(t: Throwable): Unit = fail(t)
      override def onComplete(): Unit = signals.put(SubscriptionSignal.Completed)
    }

    def started(f: CompletableFuture[Void]): Unit = {
      future = Some(f)
      f.whenComplete((_: Void, t: Throwable) => if (t != null) fail(t))
      if (cancelled) f.cancel(true)
    }

    def fail(t: Throwable): Unit =
      if (!cancelled) signals.put(SubscriptionSignal.Failed(translate(unwrap(t))))

    override def next(timeoutMs: Long): Option[SubscriptionSignal] = {
      val signal = Option(signals.poll(math.max(0L, timeoutMs), TimeUnit.MILLISECONDS))
      if (signal.exists(_.isInstanceOf[SubscriptionSignal.Event])) upstream.foreach(_.request(1))
      signal
    }

    override def cancel(): Unit = {
      cancelled = true
      upstream.foreach(_.cancel())
      future.foreach(_.cancel(true))
    }
  }
}
