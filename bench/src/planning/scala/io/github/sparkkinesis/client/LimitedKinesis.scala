package io.github.sparkkinesis.client

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

/**
 * An in-process Kinesis of one stream whose shards each hold a backlog of `recordsPerShard` copies of `data`, serving
 * it within AWS's documented read limits in real time ([[AwsLimits]]): GetRecords through [[LimitedShard]]'s quotas,
 * throttled calls failing as the SDK client fails on AWS's ProvisionedThroughputExceededException; enhanced fan-out
 * through [[LimitedSubscription]]s. No network, no per-call copies of the data: what it costs is the connector's. Every
 * shard is open and takes no new records, so a reader at the end of the backlog is at the tip (MillisBehindLatest 0).
 */
final class LimitedKinesis(
    val streamName: String,
    shardCount: Int,
    recordsPerShard: Int,
    data: Array[Byte],
    val limits: AwsLimits = AwsLimits())
    extends KinesisClient with FanOutClient {

  val shards: IndexedSeq[LimitedShard] = {
    val width = (BigInt(1) << 128) / shardCount
    (0 until shardCount).map { i =>
      val last = if (i == shardCount - 1) (BigInt(1) << 128) - 1 else width * (i + 1) - 1
      new LimitedShard(i, f"shardId-$i%012d", HashKeyRange(width * i, last), recordsPerShard, data, limits)
    }
  }
  private val byId = shards.map(s => s.id -> s).toMap
  private val consumers = new ConcurrentHashMap[String, ConsumerDescription]()
  private val tags = new ConcurrentHashMap[String, Map[String, String]]()
  private val subscriptions = new AtomicLong()

  /** Bytes of record data in the whole backlog. */
  def backlogBytes: Long = shardCount.toLong * recordsPerShard * data.length

  /** GetRecords calls served, throttled, and throttled by a large page's read-rate debt, over every shard. */
  def calls: (Long, Long, Long) = shards.map(_.calls).foldLeft((0L, 0L, 0L)) { case ((a, b, c), (x, y, z)) =>
    (a + x, b + y, c + z)
  }

  def subscribeCalls: Long = subscriptions.get()

  override def listShards(stream: String): Seq[ShardDescription] = {
    check(stream)
    shards.map(_.describe)
  }

  override def shardIterator(stream: String, shardId: String, start: IteratorStart): String = {
    check(stream)
    s"$shardId/${positionOf(shard(shardId), start)}/${System.currentTimeMillis()}"
  }

  override def getRecords(stream: String, iterator: String, limit: Int): RecordBatch = {
    check(stream)
    val Array(shardId, at, issuedAt) = iterator.split('/')
    val s = shard(shardId)
    val now = System.currentTimeMillis()
    if (now - issuedAt.toLong > limits.iteratorTtlMs) {
      throw new ExpiredIteratorException(s"GetRecords: the iterator for shard '$shardId' has expired")
    }
    if (!s.admit(now)) throw AwsLimits.throttled(stream, shardId)
    val from = at.toInt
    val count =
      if (from >= s.records) 0 else s.pageLength(from, math.min(limit, limits.maxPageRecords), limits.maxPageBytes)
    s.charge(now, count.toLong * s.recordBytes)
    val until = from + count
    RecordBatch(s.slice(from, count), Some(s"$shardId/$until/$now"), lagAt(s, until, now))
  }

  // ---- enhanced fan-out: consumers are ACTIVE at once ----

  override def streamArn(stream: String): String = FakeFanOut.streamArn(check(stream))

  override def describeConsumer(streamArn: String, consumerName: String): Option[ConsumerDescription] =
    Option(consumers.get(consumerName))

  override def describeConsumerByArn(consumerArn: String): Option[ConsumerDescription] =
    listConsumers("").find(_.arn == consumerArn)

  override def registerConsumer(
      streamArn: String,
      consumerName: String,
      given: Map[String, String]): ConsumerDescription = {
    val consumer = consumers.computeIfAbsent(
      consumerName,
      name => ConsumerDescription(name, s"$streamArn/consumer/$name:1", "ACTIVE", System.currentTimeMillis()))
    tagConsumer(consumer.arn, given)
    consumer
  }

  override def listConsumers(streamArn: String): Seq[ConsumerDescription] = {
    val out = Seq.newBuilder[ConsumerDescription]
    consumers.values().forEach(c => out += c)
    out.result()
  }

  override def consumerTags(consumerArn: String): Map[String, String] = tags.getOrDefault(consumerArn, Map.empty)

  override def tagConsumer(consumerArn: String, added: Map[String, String]): Unit =
    tags.merge(consumerArn, added, (old: Map[String, String], add: Map[String, String]) => old ++ add)

  override def deregisterConsumer(consumerArn: String): Unit =
    listConsumers("").filter(_.arn == consumerArn).foreach(c => consumers.remove(c.name))

  override def subscribeToShard(consumerArn: String, shardId: String, start: IteratorStart): ShardSubscription = {
    subscriptions.incrementAndGet()
    val s = shard(shardId)
    new LimitedSubscription(s, positionOf(s, start), limits, (until, now) => lagAt(s, until, now))
  }

  /** 0 at the end of the backlog, else the age of the next record, at least 1 ms. */
  private def lagAt(s: LimitedShard, position: Int, now: Long): Long =
    if (position >= s.records) 0L else math.max(1L, now - s.arrivalOf(position))

  private def positionOf(s: LimitedShard, start: IteratorStart): Int = start match {
    case IteratorStart.TrimHorizon | IteratorStart.AtTimestamp(_) => 0
    case IteratorStart.Latest => s.records
    case IteratorStart.AtSequenceNumber(seq) => s.positionOf(seq)
    case IteratorStart.AfterSequenceNumber(seq) => s.positionOf(seq) + 1
  }

  private def check(stream: String): String = {
    val name = StreamRef.nameOf(stream)
    if (name != streamName) throw new ResourceMissingException(s"Stream '$stream' not found.")
    name
  }

  private def shard(id: String): LimitedShard =
    byId.getOrElse(id, throw new ResourceMissingException(s"shard '$id' of stream '$streamName' not found"))
}
