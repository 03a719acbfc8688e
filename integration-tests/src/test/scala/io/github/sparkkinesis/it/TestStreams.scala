package io.github.sparkkinesis.it

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.util.concurrent.atomic.AtomicLong

import scala.collection.JavaConverters._
import scala.concurrent.duration._

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/** A record as a test put it, and where Kinesis stored it. */
final case class Put(partitionKey: String, data: Array[Byte], shardId: String, sequenceNumber: String) {
  def payload: String = new String(data, UTF_8)
}

/** One KPL aggregate as stored: its Kinesis position and the user records inside it, in sub-sequence order. */
final case class AggregatedPut(
    shardId: String,
    sequenceNumber: String,
    partitionKey: String,
    userRecords: Seq[(String, Array[Byte])])

/**
 * Test-side access to the emulator through an unshaded AWS SDK v2 client: streams with unique names, puts that report
 * where each record went, resharding that returns once the stream is ACTIVE again, raw reads.
 */
object TestStreams {
  val Region: String = "us-east-1"
  val AccessKeyId: String = "AKIAIOSFODNN7EXAMPLE"
  val SecretKey: String = "secret"

  /** Emulator operations finish in about 100 ms; this bound only keeps a broken emulator from hanging a test. */
  val OperationTimeout: FiniteDuration = 30.seconds

  private val PutRecordsLimit = 500
  private val MaxPutAttempts = 10
  private val counter = new AtomicLong()

  lazy val client: KinesisClient = KinesisClient.builder()
    .endpointOverride(URI.create(KinesisMock.endpoint))
    .region(software.amazon.awssdk.regions.Region.of(Region))
    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(AccessKeyId, SecretKey)))
    .httpClientBuilder(ApacheHttpClient.builder())
    .build()

  /** A new stream named `<prefix>-<unique suffix>` with `shards` open shards, returned once it is ACTIVE. */
  def createStream(prefix: String, shards: Int): String = {
    val name = s"$prefix-${counter.incrementAndGet()}-${UUID.randomUUID().toString.take(8)}"
    client.createStream(CreateStreamRequest.builder().streamName(name).shardCount(shards).build())
    awaitActive(name)
    name
  }

  /** Waits (bounded) until the stream is ACTIVE, as it is again after resharding. */
  def awaitActive(stream: String): Unit =
    Eventually.await(s"stream $stream to become ACTIVE", OperationTimeout, s"status ${status(stream)}") {
      status(stream) == StreamStatus.ACTIVE
    }

  def arnOf(stream: String): String =
    client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
      .streamDescriptionSummary().streamARN()

  def status(stream: String): StreamStatus =
    client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
      .streamDescriptionSummary().streamStatus()

  /** Every shard of the stream, open and closed, in shard-id order. */
  def listShards(stream: String): Seq[Shard] = {
    val shards = Seq.newBuilder[Shard]
    var response = client.listShards(ListShardsRequest.builder().streamName(stream).build())
    shards ++= response.shards().asScala
    while (response.nextToken() != null) {
      response = client.listShards(ListShardsRequest.builder().nextToken(response.nextToken()).build())
      shards ++= response.shards().asScala
    }
    shards.result().sortBy(_.shardId())
  }

  def openShards(stream: String): Seq[Shard] =
    listShards(stream).filter(_.sequenceNumberRange().endingSequenceNumber() == null)

  /**
   * Puts `(partitionKey, data)` records with PutRecords, 500 per call, in order; entries the emulator refuses are
   * retried (bounded). Returns one [[Put]] per input record, in input order.
   */
  def putRecords(stream: String, records: Seq[(String, Array[Byte])]): Seq[Put] =
    records.grouped(PutRecordsLimit).flatMap(chunk => putChunk(stream, chunk.toIndexedSeq)).toVector

  /**
   * `n` (partitionKey, payload) pairs over `keys` partition keys, payloads unique per `prefix`: "<prefix>-<i>", so a
   * test can tell every record apart and see which phase of the test put it.
   */
  def testRecords(prefix: String, n: Int, keys: Int): Seq[(String, String)] =
    (0 until n).map(i => (s"key-${i % keys}", s"$prefix-$i"))

  /** [[putRecords]] for UTF-8 string payloads. */
  def putStrings(stream: String, records: Seq[(String, String)]): Seq[Put] =
    putRecords(stream, records.map { case (k, v) => (k, v.getBytes(UTF_8)) })

  private def putChunk(stream: String, chunk: IndexedSeq[(String, Array[Byte])]): Seq[Put] = {
    val results = new Array[Put](chunk.size)
    var pending: Seq[Int] = chunk.indices
    var attempt = 0
    while (pending.nonEmpty) {
      attempt += 1
      if (attempt > MaxPutAttempts) {
        throw new AssertionError(
          s"${pending.size} records still refused by PutRecords on $stream after $MaxPutAttempts attempts")
      }
      val entries = pending.map { i =>
        PutRecordsRequestEntry.builder().partitionKey(chunk(i)._1).data(SdkBytes.fromByteArray(chunk(i)._2)).build()
      }
      val response = client.putRecords(PutRecordsRequest.builder().streamName(stream).records(entries.asJava).build())
      val answers = response.records().asScala
      pending = pending.zip(answers).flatMap { case (i, answer) =>
        if (answer.errorCode() == null) {
          results(i) = Put(chunk(i)._1, chunk(i)._2, answer.shardId(), answer.sequenceNumber())
          None
        } else Some(i)
      }
    }
    results.toSeq
  }

  /**
   * Packs the user records into KPL aggregates with the awslabs `RecordAggregator` (in input order, a new aggregate
   * whenever one is full) and puts each with PutRecord under the aggregate's own explicit hash key.
   */
  def putAggregated(stream: String, userRecords: Seq[(String, Array[Byte])]): Seq[AggregatedPut] = {
    KplAggregates.build(userRecords).map { aggregate =>
      val response = client.putRecord(PutRecordRequest.builder()
        .streamName(stream)
        .partitionKey(aggregate.partitionKey)
        .explicitHashKey(aggregate.explicitHashKey)
        .data(SdkBytes.fromByteArray(aggregate.bytes))
        .build())
      AggregatedPut(response.shardId(), response.sequenceNumber(), aggregate.partitionKey, aggregate.userRecords)
    }
  }

  /** Splits `shardId` at the middle of its hash key range; returns the two children once the stream is ACTIVE. */
  def splitShard(stream: String, shardId: String): Seq[String] = {
    val range = shard(stream, shardId).hashKeyRange()
    val start = BigInt(range.startingHashKey())
    val end = BigInt(range.endingHashKey())
    val middle = start + (end - start + 1) / 2
    client.splitShard(SplitShardRequest.builder()
      .streamName(stream).shardToSplit(shardId).newStartingHashKey(middle.toString).build())
    awaitChildren(stream, s"split of $shardId", _.parentShardId() == shardId, expected = 2)
  }

  /** Merges two shards with adjacent hash key ranges; returns the child once the stream is ACTIVE. */
  def mergeShards(stream: String, shardId: String, adjacentShardId: String): String = {
    client.mergeShards(MergeShardsRequest.builder()
      .streamName(stream).shardToMerge(shardId).adjacentShardToMerge(adjacentShardId).build())
    awaitChildren(
      stream,
      s"merge of $shardId and $adjacentShardId",
      s => s.parentShardId() == shardId && s.adjacentParentShardId() == adjacentShardId,
      expected = 1).head
  }

  /** UpdateShardCount with uniform scaling; returns the open shards once the stream is ACTIVE again. */
  def updateShardCount(stream: String, target: Int): Seq[Shard] = {
    client.updateShardCount(UpdateShardCountRequest.builder()
      .streamName(stream).targetShardCount(target).scalingType(ScalingType.UNIFORM_SCALING).build())
    Eventually.await(
      s"stream $stream to have $target open shards and be ACTIVE",
      OperationTimeout,
      s"open shards ${openShards(stream).map(_.shardId())}") {
      status(stream) == StreamStatus.ACTIVE && openShards(stream).size == target
    }
    openShards(stream)
  }

  /** Two open shards whose hash key ranges touch, in range order, for [[mergeShards]]. */
  def adjacentOpenShards(stream: String): (String, String) = {
    val open = openShards(stream).sortBy(s => BigInt(s.hashKeyRange().startingHashKey()))
    open.sliding(2).collectFirst {
      case Seq(a, b) if BigInt(a.hashKeyRange().endingHashKey()) + 1 == BigInt(b.hashKeyRange().startingHashKey()) =>
        (a.shardId(), b.shardId())
    }.getOrElse(throw new AssertionError(s"stream $stream has no two adjacent open shards: ${open.map(_.shardId())}"))
  }

  private def shard(stream: String, shardId: String): Shard =
    listShards(stream).find(_.shardId() == shardId)
      .getOrElse(throw new AssertionError(s"shard $shardId not found in stream $stream"))

  private def awaitChildren(stream: String, what: String, isChild: Shard => Boolean, expected: Int): Seq[String] =
    Eventually.awaitValue(
      s"$what in stream $stream to finish (stream ACTIVE, $expected new shard(s))",
      OperationTimeout,
      s"shards ${listShards(stream).map(_.shardId())}, status ${status(stream)}") {
      val children = listShards(stream).filter(isChild).map(_.shardId())
      if (children.size == expected && status(stream) == StreamStatus.ACTIVE) Some(children) else None
    }

  /**
   * Reads a shard from TRIM_HORIZON with GetRecords until the reader is at the tip of an open shard or at the end of a
   * closed one: the records exactly as Kinesis stores them, for checking the test data itself.
   */
  def readShard(stream: String, shardId: String): Seq[Record] = {
    var iterator = client.getShardIterator(GetShardIteratorRequest.builder()
      .streamName(stream).shardId(shardId).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
    val records = Vector.newBuilder[Record]
    var atEnd = false
    val deadline = OperationTimeout.fromNow
    while (!atEnd) {
      if (deadline.isOverdue())
        throw new AssertionError(s"reading shard $shardId of $stream took over $OperationTimeout")
      val response = client.getRecords(GetRecordsRequest.builder().shardIterator(iterator).build())
      records ++= response.records().asScala
      iterator = response.nextShardIterator()
      atEnd = iterator == null || (response.records().isEmpty && response.millisBehindLatest() == 0L)
    }
    records.result()
  }

  /** Every record of every shard of the stream, as [[readShard]] reads them, keyed by shard id. */
  def readStream(stream: String): Seq[(String, Record)] =
    listShards(stream).flatMap(s => readShard(stream, s.shardId()).map(r => (s.shardId(), r)))
}
