package io.github.sparkkinesis.client

import java.time.{Duration, Instant}
import java.util.Locale

import io.github.sparkkinesis.compat.JavaCollections._
import scala.util.control.NonFatal

import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.core.exception.{AbortedException, SdkClientException}
import software.amazon.awssdk.http.{SdkHttpClient, SdkHttpConfigurationOption}
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain
import software.amazon.awssdk.retries.api.{BackoffStrategy, RetryStrategy}
import software.amazon.awssdk.services.kinesis.{KinesisClient => AwsKinesisClient}
import software.amazon.awssdk.utils.AttributeMap
import software.amazon.awssdk.services.kinesis.model.{
  DescribeStreamSummaryRequest,
  GetRecordsRequest,
  GetShardIteratorRequest,
  ListShardsRequest,
  ListShardsResponse,
  PutRecordRequest,
  PutRecordsRequest,
  PutRecordsRequestEntry,
  Record,
  Shard,
  ShardIteratorType
}

/**
 * [[KinesisClient]] on the AWS SDK v2's synchronous Kinesis client, configured entirely from `settings`; the SDK client
 * is built (and the region resolved) at construction, so a missing region fails there.
 */
final class SdkKinesisClient(settings: ClientSettings) extends KinesisClient with FanOutClient with SinkClient {
  import SdkKinesisClient._

  // Resolved first: it is the step most likely to fail, and nothing needs closing yet when it does.
  private val region = SdkKinesisClient.region(settings)

  private val credentialsProvider: AwsCredentialsProvider = CredentialsProviders.of(settings)

  private val errors = SdkErrors.of(settings)

  private val sdk: AwsKinesisClient = {
    val builder = AwsKinesisClient.builder()
      // Built explicitly: the SDK's ServiceLoader discovery of HTTP clients breaks in the shaded, relocated JAR.
      // Passing the builder (not a built client) lets the SDK own the HTTP client and close it with itself.
      .region(region)
      .credentialsProvider(credentialsProvider)
      .overrideConfiguration(ClientOverrideConfiguration.builder().retryStrategy(retryStrategy(settings.retry)).build())
    if (settings.verifyCertificate) builder.httpClientBuilder(pooledHttpClient())
    else builder.httpClientBuilder(new TrustAnyCertificateHttpClientBuilder)
    settings.endpointUrl.foreach(builder.endpointOverride)
    builder.build()
  }

  override def listShards(streamName: String): Seq[ShardDescription] =
    call("ListShards", streamName, None)(listAllShards(streamName)(sdk.listShards))

  override def shardIterator(streamName: String, shardId: String, start: IteratorStart): String =
    call("GetShardIterator", streamName, Some(shardId)) {
      val request = shardIteratorRequest(streamName, shardId)
      start match {
        case IteratorStart.TrimHorizon => request.shardIteratorType(ShardIteratorType.TRIM_HORIZON)
        case IteratorStart.Latest => request.shardIteratorType(ShardIteratorType.LATEST)
        case IteratorStart.AtTimestamp(millis) =>
          request.shardIteratorType(ShardIteratorType.AT_TIMESTAMP).timestamp(Instant.ofEpochMilli(millis))
        case IteratorStart.AtSequenceNumber(seq) =>
          request.shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).startingSequenceNumber(seq)
        case IteratorStart.AfterSequenceNumber(seq) =>
          request.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).startingSequenceNumber(seq)
      }
      sdk.getShardIterator(request.build()).shardIterator
    }

  override def getRecords(streamName: String, iterator: String, limit: Int): RecordBatch =
    call("GetRecords", streamName, None) {
      val tail = new AnswerTail
      val request = getRecordsRequest(streamName, iterator, limit).toBuilder
        .overrideConfiguration(AwsRequestOverrideConfiguration.builder().addMetricPublisher(tail).build())
      val response = sdk.getRecords(request.build())
      val records = response.records.asScala.map(toRecord).toVector
      RecordBatch(
        records = records,
        nextIterator = Option(response.nextShardIterator),
        millisBehindLatest =
          millisBehind(Option(response.millisBehindLatest).map(_.longValue), records, System.currentTimeMillis()),
        childShardIds = response.childShards.asScala.map(_.shardId).toVector,
        msAfterAnswer = tail.ms)
    }

  override def maxRecordSizeInKiB(streamName: String): Option[Int] = call("DescribeStreamSummary", streamName, None) {
    val named = DescribeStreamSummaryRequest.builder()
    val request = if (StreamRef.isArn(streamName)) named.streamARN(streamName) else named.streamName(streamName)
    Option(sdk.describeStreamSummary(request.build()).streamDescriptionSummary.maxRecordSizeInKiB).map(_.intValue)
  }

  override def writeRecord(
      streamName: String,
      partitionKey: String,
      explicitHashKey: Option[String],
      data: Array[Byte]): String = call("PutRecord", streamName, None) {
    val named = PutRecordRequest.builder().partitionKey(partitionKey).explicitHashKey(explicitHashKey.orNull)
      .data(SdkBytes.fromByteArrayUnsafe(data)) // no copy: the request is sent and dropped before the row is
    val request = if (StreamRef.isArn(streamName)) named.streamARN(streamName) else named.streamName(streamName)
    sdk.putRecord(request.build()).sequenceNumber
  }

  override def writeRecords(streamName: String, entries: Seq[PutEntry]): Seq[PutOutcome] =
    call("PutRecords", streamName, None) {
      val records = entries.map { e =>
        PutRecordsRequestEntry.builder().partitionKey(e.partitionKey).explicitHashKey(e.explicitHashKey.orNull)
          .data(SdkBytes.fromByteArrayUnsafe(e.data)).build() // no copy, as in writeRecord
      }
      val named = PutRecordsRequest.builder().records(records.asJava)
      val request = if (StreamRef.isArn(streamName)) named.streamARN(streamName) else named.streamName(streamName)
      sdk.putRecords(request.build()).records.asScala.toSeq.map { r =>
        if (r.errorCode == null) PutOutcome.Stored(r.sequenceNumber)
        else PutOutcome.Refused(r.errorCode, String.valueOf(r.errorMessage))
      }
    }

  /** Built on the first enhanced fan-out call: a polling query never starts Netty's threads. */
  private lazy val fanOut = new SdkFanOutClient(settings, region, credentialsProvider, errors)
  @volatile private var fanOutStarted = false

  private def fanOutClient: SdkFanOutClient = {
    fanOutStarted = true
    fanOut
  }

  override def streamArn(streamName: String): String = fanOutClient.streamArn(streamName)

  override def describeConsumer(streamArn: String, consumerName: String): Option[ConsumerDescription] =
    fanOutClient.describeConsumer(streamArn, consumerName)

  override def describeConsumerByArn(consumerArn: String): Option[ConsumerDescription] =
    fanOutClient.describeConsumerByArn(consumerArn)

  override def registerConsumer(
      streamArn: String,
      consumerName: String,
      tags: Map[String, String]): ConsumerDescription =
    fanOutClient.registerConsumer(streamArn, consumerName, tags)

  override def listConsumers(streamArn: String): Seq[ConsumerDescription] = fanOutClient.listConsumers(streamArn)

  override def consumerTags(consumerArn: String): Map[String, String] = fanOutClient.consumerTags(consumerArn)

  override def tagConsumer(consumerArn: String, tags: Map[String, String]): Unit =
    fanOutClient.tagConsumer(consumerArn, tags)

  override def deregisterConsumer(consumerArn: String): Unit = fanOutClient.deregisterConsumer(consumerArn)

  override def subscribeToShard(consumerArn: String, shardId: String, start: IteratorStart): ShardSubscription =
    fanOutClient.subscribeToShard(consumerArn, shardId, start)

  override def close(): Unit = {
    if (fanOutStarted) fanOut.close()
    sdk.close()
    credentialsProvider match {
      case closeable: AutoCloseable => closeable.close() // the SDK does not close providers handed to it
      case _ =>
    }
  }

  private def call[T](operation: String, streamName: String, shardId: Option[String])(body: => T): T =
    try body
    catch {
      // Spark stops a query by interrupting its threads; it must see an interruption, not a Kinesis failure.
      case e: AbortedException if Thread.currentThread().isInterrupted || isInterruption(e) =>
        throw new InterruptedException(s"$operation on stream '$streamName' was interrupted")
      case NonFatal(e) => throw errors.translate(e, operation, streamName, shardId)
    }

  private def isInterruption(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).exists {
      case _: InterruptedException | _: java.io.InterruptedIOException => true
      case _ => false
    }
}

object SdkKinesisClient {

  /** The region `settings` name, else the SDK's default region chain's; fails naming option kinesis.region. */
  private[sparkkinesis] def region(settings: ClientSettings): Region =
    resolveRegion(settings.region, settings.endpointUrl.isDefined, () => defaultRegionChain())

  /**
   * Builds Apache HTTP clients that accept any certificate and host name, for `kinesis.verifyCertificate` false (an
   * emulator's self-signed certificate). The SDK hands its defaults to `buildWithDefaults`; trust-all goes over them.
   */
  private final class TrustAnyCertificateHttpClientBuilder
      extends SdkHttpClient.Builder[TrustAnyCertificateHttpClientBuilder] {
    override def buildWithDefaults(defaults: AttributeMap): SdkHttpClient =
      pooledHttpClient().buildWithDefaults(AttributeMap.builder()
        .put(SdkHttpConfigurationOption.TRUST_ALL_CERTIFICATES, java.lang.Boolean.TRUE).build().merge(defaults))
  }

  /**
   * Most connections one client holds at once. An executor's tasks share one client ([[SharedClients]]), and a
   * real-time task polls each of its shards on a thread of its own, 5 calls per second each: with the SDK's default of
   * 50, 200 shards on one executor queued for connections (bench/README.md, `connections`). Connections are opened only
   * as calls need them and closed after a minute idle, so the bound costs nothing until calls run at once.
   */
  private[client] val MaxConnections = 2000

  /** The Apache HTTP client, its pool sized for one connection per thread that may call at once. */
  private def pooledHttpClient(): ApacheHttpClient.Builder = ApacheHttpClient.builder().maxConnections(MaxConnections)

  /** AWS region names: lower-case words and numbers joined by dashes, e.g. us-east-1 or us-gov-west-1. */
  private val RegionName = "[a-z0-9]+(-[a-z0-9]+)+".r

  /**
   * The region from option `kinesis.region` (trimmed, lower-cased), else from the SDK's default region chain. A region
   * is needed even with `kinesis.endpointUrl`, because requests are signed for one.
   */
  private[client] def resolveRegion(configured: Option[String], hasEndpoint: Boolean, chain: () => Region): Region =
    configured match {
      case Some(name) =>
        val normalized = name.trim.toLowerCase(Locale.ROOT)
        if (RegionName.pattern.matcher(normalized).matches()) Region.of(normalized)
        else throw new KinesisClientException(
          s"Option kinesis.region is '$name', which is not an AWS region name: use one like us-east-1.")
      case None =>
        try chain()
        catch {
          case e: SdkClientException =>
            val why = if (hasEndpoint) " (requests to kinesis.endpointUrl are signed for a region too)" else ""
            throw new KinesisClientException(
              s"No AWS region is configured$why: set option kinesis.region, e.g. us-east-1, or configure a region " +
                "for the AWS default region chain (AWS_REGION, aws.region, ~/.aws/config).",
              e)
        }
    }

  /** The first ListShards page of a stream given by name or ARN (an ARN goes in StreamARN, never in StreamName). */
  private[client] def listShardsRequest(stream: String): ListShardsRequest = {
    val request = ListShardsRequest.builder().maxResults(MaxShardsPerPage)
    (if (StreamRef.isArn(stream)) request.streamARN(stream) else request.streamName(stream)).build()
  }

  /** The most shards one ListShards page holds: AWS answers at most 1,000 whatever MaxResults asks for. */
  private[sparkkinesis] val MaxShardsPerPage = 1000

  /**
   * Every shard of `stream`, page by page through `send` (one ListShards call each). Only the first page names the
   * stream: ListShards refuses NextToken together with StreamName, StreamARN, ShardFilter or ExclusiveStartShardId, so
   * later pages carry the token alone, and a stream of more than 1,000 shards is listed whole.
   */
  private[sparkkinesis] def listAllShards(stream: String)(
      send: ListShardsRequest => ListShardsResponse): Seq[ShardDescription] = {
    val shards = Vector.newBuilder[ShardDescription]
    var page = send(listShardsRequest(stream))
    page.shards.asScala.foreach(s => shards += describe(s))
    while (page.nextToken != null) {
      page = send(ListShardsRequest.builder().nextToken(page.nextToken).maxResults(MaxShardsPerPage).build())
      page.shards.asScala.foreach(s => shards += describe(s))
    }
    shards.result()
  }

  /**
   * GetRecords from `iterator`; with the stream's ARN too when it was given by ARN: access granted by another account's
   * resource-based policy is checked against it (kinesis-mock finds another account's stream only so).
   */
  private[client] def getRecordsRequest(stream: String, iterator: String, limit: Int): GetRecordsRequest = {
    val request = GetRecordsRequest.builder().shardIterator(iterator).limit(limit)
    (if (StreamRef.isArn(stream)) request.streamARN(stream) else request).build()
  }

  /** GetShardIterator for a shard of a stream given by name or ARN, its start still to set. */
  private[client] def shardIteratorRequest(stream: String, shardId: String): GetShardIteratorRequest.Builder = {
    val request = GetShardIteratorRequest.builder().shardId(shardId)
    if (StreamRef.isArn(stream)) request.streamARN(stream) else request.streamName(stream)
  }

  private def defaultRegionChain(): Region = DefaultAwsRegionProviderChain.builder().build().getRegion

  /**
   * Up to `numRetries` retries of whatever the SDK deems retryable (throttling, 5xx, I/O errors), with full-jitter
   * exponential backoff between the base and maximum delays. The circuit breaker is off: it would make one shard's
   * retries depend on how many failures other shards of the same client saw recently.
   */
  private[sparkkinesis] def retryStrategy(retry: RetrySettings): RetryStrategy = {
    val backoff =
      BackoffStrategy.exponentialDelay(Duration.ofMillis(retry.baseDelayMs), Duration.ofMillis(retry.maxDelayMs))
    AwsRetryStrategy.standardRetryStrategy().toBuilder
      .maxAttempts(retry.numRetries + 1)
      .backoffStrategy(backoff)
      .throttlingBackoffStrategy(backoff)
      .circuitBreakerEnabled(false)
      .build()
  }

  /**
   * MillisBehindLatest as Kinesis reported it. AWS always reports it; if an endpoint does not, an empty batch counts as
   * caught up (0) and otherwise the age of the last record returned stands in, an upper bound that keeps a lagging
   * reader from believing it is at the tip.
   */
  private[client] def millisBehind(reported: Option[Long], records: Seq[KinesisRecord], nowMillis: Long): Long =
    reported.getOrElse {
      records.lastOption.fold(0L)(last => math.max(0L, nowMillis - last.approximateArrivalTimestampMillis))
    }

  private[client] def toRecord(r: Record): KinesisRecord =
    // asByteArrayUnsafe: no copy of the payload; the SDK response is dropped right after, so nothing else shares it.
    KinesisRecord(
      r.data.asByteArrayUnsafe,
      r.partitionKey,
      r.sequenceNumber,
      r.approximateArrivalTimestamp.toEpochMilli)

  private def describe(s: Shard): ShardDescription =
    ShardDescription(
      shardId = s.shardId,
      parentShardId = Option(s.parentShardId),
      adjacentParentShardId = Option(s.adjacentParentShardId),
      hashKeyRange = HashKeyRange(BigInt(s.hashKeyRange.startingHashKey), BigInt(s.hashKeyRange.endingHashKey)),
      startingSequenceNumber = s.sequenceNumberRange.startingSequenceNumber,
      endingSequenceNumber = Option(s.sequenceNumberRange.endingSequenceNumber))
}
