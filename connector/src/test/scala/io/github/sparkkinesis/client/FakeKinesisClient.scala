package io.github.sparkkinesis.client

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.concurrent.Semaphore

import scala.collection.mutable

/**
 * An in-memory [[KinesisClient]] that answers as Kinesis (AWS and kinesis-mock) does, with admin calls to shape streams
 * and knobs to inject failures; every method is synchronized.
 *
 * Semantics worth knowing: sequence numbers are 56-digit AWS-like strings, increasing across the whole fake (compare
 * them as BigInt); a shard's starting sequence number is below and its ending one above all its records. Iterators
 * encode (stream, shard, position, issue time) and expire `iteratorTtlMillis` after issue. GetRecords on a closed shard
 * returns no next iterator in the batch that reaches its end, together with the child shard ids. `millisBehindLatest`
 * is 0 exactly at the tip, else the age of the last record returned (at least 1). AT_TIMESTAMP in the future is
 * rejected with [[TimestampInFutureException]], as kinesis-mock does. Two things AWS does that kinesis-mock never shows
 * are modelled: empty pages with MillisBehindLatest above 0 before records ([[emptyPagesAhead]]), and positions behind
 * the trim horizon, from which Kinesis silently resumes at the horizon ([[trimShard]]). Records count partition key and
 * data against the stream's limit, 1 MiB unless raised by [[updateMaxRecordSize]] (up to 10 MiB, as AWS allows since
 * 2025; only then does DescribeStreamSummary report it, as kinesis-mock never does), and GetRecords returns at most 10
 * MiB, but always at least one record.
 *
 * Streams are addressed as the SDK client would address them: each call is checked against the request
 * [[SdkKinesisClient]] would send for it (an ARN in StreamARN, a name in StreamName), and refused as AWS refuses it
 * (InvalidArgumentException for an ARN given as StreamName). A stream created with another `account` (the cross-account
 * case, shared by a resource-based policy) is found only by its ARN: its name resolves in the caller's account, where
 * no such stream exists.
 */
final class FakeKinesisClient(clock: () => Long = new ManualClock(), iteratorTtlMillis: Long = 5 * 60 * 1000L)
    extends KinesisClient with FanOutClient with SinkClient {
  import FakeKinesisClient._

  private val streams = mutable.Map.empty[String, mutable.LinkedHashMap[String, FakeShard]]
  private val shardCounters = mutable.Map.empty[String, Int]
  private val maxRecordSizes = mutable.Map.empty[String, Int] // KiB, for streams whose limit was updated
  private val accounts = mutable.Map.empty[String, String]
  private var lastSequenceNumber = SequenceBase
  private var pendingFailure: Option[RuntimeException] = None
  private val failingCalls = mutable.Map.empty[String, (Int, () => RuntimeException)]
  private var throttledGetRecords = 0
  @volatile private var getRecordsPermits: Option[Semaphore] = None
  private var expireNext = false
  private var getRecordsTakesMs = 0L
  private var getRecordsAfterAnswerMs = 0L

  /**
   * kinesis-mock's MillisBehindLatest: from the page's last record to the shard's last one, by arrival times of whole
   * seconds, so 0 on a page short of the shard's end whose records arrived in the same second as its last (AWS counts
   * from the tip of the stream, and says 0 only when caught up).
   */
  @volatile var lagFromShardsLastRecord = false
  private val served = mutable.Map.empty[String, Long].withDefaultValue(0L) // data bytes read, by shard
  private var calls = Map(
    "ListShards" -> 0,
    "GetShardIterator" -> 0,
    "GetRecords" -> 0,
    "SubscribeToShard" -> 0,
    "RegisterStreamConsumer" -> 0,
    "DescribeStreamConsumer" -> 0,
    "DeregisterStreamConsumer" -> 0,
    "ListStreamConsumers" -> 0,
    "ListTagsForResource" -> 0,
    "TagResource" -> 0,
    "DescribeStreamSummary" -> 0,
    "PutRecord" -> 0,
    "PutRecords" -> 0)

  /** Enhanced fan-out knobs and failure injection. */
  val fanOut = new FakeFanOut(this, clock)
  private var closed = false

  // ---- the KinesisClient trait ----

  /** Page by page, as [[SdkKinesisClient]] lists, each page answered as AWS answers it ([[FakeListShards]]). */
  override def listShards(streamName: String): Seq[ShardDescription] = synchronized {
    SdkKinesisClient.listAllShards(streamName) { request =>
      begin("ListShards")
      // in creation order, which is shard id order
      FakeListShards.answer(request, (name, arn) => shardsOf(addressed(name, arn)).values.map(_.describe).toVector)
    }
  }

  override def shardIterator(streamName: String, shardId: String, start: IteratorStart): String = synchronized {
    begin("GetShardIterator")
    val request = SdkKinesisClient.shardIteratorRequest(streamName, shardId).build()
    addressed(Option(request.streamName), Option(request.streamARN))
    val shard = shardOf(streamName, shardId)
    val position = positionOf(streamName, shard, start)
    // AT_SEQUENCE_NUMBER of a retained record lands on it: only a position between records meets empty pages.
    val onRecord = start.isInstanceOf[IteratorStart.AtSequenceNumber] && position >= shard.trimmed &&
      position < shard.end && shard.slice(position, position + 1).head.sequenceNumber ==
      start.asInstanceOf[IteratorStart.AtSequenceNumber].sequenceNumber
    FakeIterator(streamName, shardId, position, clock(), if (onRecord) 0 else shard.emptyPagesPerIterator).encode
  }

  override def getRecords(streamName: String, iterator: String, limit: Int): RecordBatch = {
    getRecordsPermits.foreach(_.acquire()) // outside the lock: a test counting calls must not wait for a permit
    served(streamName, iterator, limit)
  }

  private def served(streamName: String, iterator: String, limit: Int): RecordBatch = synchronized {
    begin("GetRecords")
    clock match {
      case manual: ManualClock if getRecordsTakesMs > 0 => manual.advance(getRecordsTakesMs)
      case _ =>
    }
    if (throttledGetRecords > 0) {
      throttledGetRecords -= 1
      throw new ThrottledException(s"GetRecords on stream '$streamName': rate exceeded (injected)")
    }
    val it = FakeIterator.decode(iterator).filter(_.stream == streamName).getOrElse(
      throw new KinesisClientException(s"GetRecords: '$iterator' is not a shard iterator of stream '$streamName'"))
    if (expireNext || clock() - it.issuedAtMillis > iteratorTtlMillis) {
      expireNext = false
      throw new ExpiredIteratorException(s"GetRecords: the iterator for shard '${it.shardId}' has expired")
    }
    if (limit < 1 || limit > 10000) throw new KinesisClientException(s"GetRecords: limit $limit is not in 1..10000")
    val request = SdkKinesisClient.getRecordsRequest(streamName, iterator, limit)
    val name = StreamRef.nameOf(streamName)
    if (accounts(name) != FakeFanOut.Account && Option(request.streamARN).forall(arn =>
        resolve(None, Some(arn)) != name)) {
      // The iterator alone names a stream of the caller's account (kinesis-mock); access by another account's
      // resource-based policy is checked against the StreamARN.
      throw new ResourceMissingException(s"Stream arn ${FakeFanOut.streamArn(name)} not found.")
    }
    val shard = shardOf(streamName, it.shardId)
    val from = math.max(it.position, shard.trimmed)
    if (it.emptyPagesLeft > 0 && from < shard.end) {
      val ahead = shard.slice(from, from + 1).head
      return RecordBatch(
        Nil,
        Some(it.copy(position = from, issuedAtMillis = clock(), emptyPagesLeft = it.emptyPagesLeft - 1).encode),
        millisBehindLatest =
          shard.emptyPageLag.getOrElse(math.max(1L, clock() - ahead.approximateArrivalTimestampMillis)))
    }
    val until = from + pageSize(shard.slice(from, math.min(shard.end, from + limit)))
    val records = shard.slice(from, until)
    noteServed(shard.id, records)
    val atTip = until == shard.end
    val next = if (atTip && shard.isClosed) None else Some(FakeIterator(streamName, shard.id, until, clock()).encode)
    RecordBatch(
      records,
      next,
      millisBehindLatest =
        if (atTip) 0L
        else if (lagFromShardsLastRecord) {
          val second = (ms: Long) => ms / 1000L * 1000L
          second(shard.slice(shard.end - 1, shard.end).head.approximateArrivalTimestampMillis) -
            second(records.last.approximateArrivalTimestampMillis)
        } else math.max(1L, clock() - records.last.approximateArrivalTimestampMillis),
      childShardIds = if (next.isEmpty) childrenOf(streamName, shard.id) else Nil,
      msAfterAnswer = getRecordsAfterAnswerMs)
  }

  override def close(): Unit = synchronized { closed = true }

  // ---- the SinkClient trait ----

  override def maxRecordSizeInKiB(streamName: String): Option[Int] = synchronized {
    begin("DescribeStreamSummary")
    shardsOf(streamName)
    maxRecordSizes.get(streamName)
  }

  override def writeRecord(
      streamName: String,
      partitionKey: String,
      explicitHashKey: Option[String],
      data: Array[Byte]): String = synchronized {
    begin("PutRecord")
    putRecord(streamName, partitionKey, data, explicitHashKey.map(BigInt(_)))._2
  }

  override def writeRecords(streamName: String, entries: Seq[PutEntry]): Seq[PutOutcome] = synchronized {
    begin("PutRecords")
    entries.map { e =>
      PutOutcome.Stored(putRecord(streamName, e.partitionKey, e.data, e.explicitHashKey.map(BigInt(_)))._2)
    }
  }

  // ---- the FanOutClient trait: consumers and subscriptions, see FakeFanOut ----

  override def streamArn(streamName: String): String = synchronized {
    begin("DescribeStreamSummary")
    val request = SdkFanOutClient.describeStreamSummaryRequest(streamName)
    val name = addressed(Option(request.streamName), Option(request.streamARN))
    FakeFanOut.streamArn(name, accounts(name))
  }
  override def describeConsumer(streamArn: String, consumerName: String): Option[ConsumerDescription] = synchronized {
    begin("DescribeStreamConsumer")
    fanOut.describe(c => c.streamArn == streamArn && c.name == consumerName)
  }
  override def describeConsumerByArn(consumerArn: String): Option[ConsumerDescription] = synchronized {
    begin("DescribeStreamConsumer")
    fanOut.describe(_.arn == consumerArn)
  }
  override def registerConsumer(
      streamArn: String,
      consumerName: String,
      tags: Map[String, String]): ConsumerDescription = synchronized {
    begin("RegisterStreamConsumer")
    resolve(None, Some(streamArn)) // RegisterStreamConsumer takes the stream's ARN only
    fanOut.register(streamArn, consumerName, tags)
  }

  /** A consumer registered without tags, as an administrator would register one. */
  def registerConsumer(streamArn: String, consumerName: String): ConsumerDescription =
    registerConsumer(streamArn, consumerName, Map.empty)
  override def listConsumers(streamArn: String): Seq[ConsumerDescription] = synchronized {
    begin("ListStreamConsumers")
    resolve(None, Some(streamArn))
    fanOut.list(streamArn)
  }
  override def consumerTags(consumerArn: String): Map[String, String] = synchronized {
    begin("ListTagsForResource")
    fanOut.tagsOf(consumerArn)
  }
  override def tagConsumer(consumerArn: String, tags: Map[String, String]): Unit = synchronized {
    begin("TagResource")
    fanOut.tag(consumerArn, tags)
  }
  override def deregisterConsumer(consumerArn: String): Unit = synchronized {
    begin("DeregisterStreamConsumer")
    fanOut.deregister(consumerArn)
  }
  override def subscribeToShard(consumerArn: String, shardId: String, start: IteratorStart): ShardSubscription =
    synchronized {
      begin("SubscribeToShard")
      val consumer = fanOut.activeConsumer(consumerArn)
      val shard = shardOf(consumer.stream, shardId)
      fanOut.open(consumer, shardId, positionOf(consumer.stream, shard, start), start)
    }

  // ---- what tests observe ----

  def isClosed: Boolean = synchronized(closed)
  def listShardsCalls: Int = synchronized(calls("ListShards"))
  def shardIteratorCalls: Int = synchronized(calls("GetShardIterator"))
  def getRecordsCalls: Int = synchronized(calls("GetRecords"))
  def callsOf(operation: String): Int = synchronized(calls(operation))

  /** Every record of the stream's shards in shard order, then sequence order: what a reader would see. */
  def recordsOf(stream: String): Seq[KinesisRecord] = synchronized {
    shardsOf(stream).values.toVector.flatMap(s => s.slice(s.trimmed, s.end))
  }

  /**
   * The data bytes GetRecords pages and subscription events have carried so far, by shard (of every stream): what the
   * readers fetched, in memory until they hand it over.
   */
  def bytesServed: Map[String, Long] = synchronized(served.toMap)

  private[client] def noteServed(shardId: String, records: Seq[KinesisRecord]): Unit = synchronized {
    if (records.nonEmpty) served(shardId) += records.foldLeft(0L)(_ + _.data.length)
  }

  /** The Kinesis operations called so far (at least once), as IAM names them without the `kinesis:` prefix. */
  def operationsCalled: Set[String] = synchronized(calls.collect { case (op, n) if n > 0 => op }.toSet)

  // ---- failure injection ----

  /** The next `n` GetRecords calls fail with [[ThrottledException]]. */
  def throttleNextGetRecords(n: Int): Unit = synchronized { throttledGetRecords = n }

  /** The next GetRecords call fails with [[ExpiredIteratorException]], whatever the age of its iterator. */
  def expireNextIterator(): Unit = synchronized { expireNext = true }

  /** The next `n` calls of `operation` ("ListShards", "GetShardIterator" or "GetRecords") throw what `e` makes. */
  def failNextCalls(operation: String, n: Int)(e: => RuntimeException): Unit = synchronized {
    failingCalls(operation) = (n, () => e)
  }

  /** The next call of any trait method (ListShards, GetShardIterator or GetRecords) throws `e`. */
  def failNextCall(e: RuntimeException): Unit = synchronized { pendingFailure = Some(e) }

  // ---- shaping streams, as an administrator or producer would ----

  /**
   * A stream with `shardCount` open shards splitting the hash key space evenly, like CreateStream; `stream` is a name
   * (of this client's account, or of `account`) or an ARN, whose account it takes.
   */
  def createStream(stream: String, shardCount: Int, account: String = FakeFanOut.Account): Seq[String] = synchronized {
    val name = StreamRef.nameOf(stream)
    require(!streams.contains(name), s"stream '$name' exists already")
    require(shardCount > 0, s"a stream needs at least one shard, got $shardCount")
    streams(name) = mutable.LinkedHashMap.empty
    shardCounters(name) = 0
    accounts(name) = if (StreamRef.isArn(stream)) stream.split(":")(4) else account
    val width = HashSpace / shardCount
    (0 until shardCount).map { i =>
      val last = if (i == shardCount - 1) MaxHashKey else width * (i + 1) - 1
      addShard(name, None, None, HashKeyRange(width * i, last)).id
    }
  }

  /** UpdateMaxRecordSize: records of up to `kib` KiB (1024 to 10240), partition key and data, from now on. */
  def updateMaxRecordSize(stream: String, kib: Int): Unit = synchronized {
    shardsOf(stream)
    require(kib >= 1024 && kib <= 10240, s"MaxRecordSizeInKiB $kib is not in 1024..10240")
    maxRecordSizes(stream) = kib
  }

  /** PutRecord: the record goes to the open shard owning MD5(partitionKey) or `explicitHashKey`; (shard, sequence). */
  def putRecord(
      stream: String,
      partitionKey: String,
      data: Array[Byte],
      explicitHashKey: Option[BigInt] = None): (String, String) = synchronized {
    checkSize(stream, partitionKey, data)
    val hashKey =
      explicitHashKey.getOrElse(BigInt(1, MessageDigest.getInstance("MD5").digest(partitionKey.getBytes(UTF_8))))
    val shard = shardsOf(stream).values.find(s => !s.isClosed && s.range.contains(hashKey)).getOrElse(
      throw new IllegalStateException(s"no open shard of stream '$stream' owns hash key $hashKey"))
    (shard.id, append(shard, partitionKey, data))
  }

  /** A record put straight into open shard `shardId` (as an explicit hash key inside its range would); its sequence. */
  def putRecordToShard(stream: String, shardId: String, data: Array[Byte], partitionKey: String = "pk"): String =
    synchronized {
      val shard = shardOf(stream, shardId)
      require(!shard.isClosed, s"shard '$shardId' of stream '$stream' is closed")
      checkSize(stream, partitionKey, data)
      append(shard, partitionKey, data)
    }

  /** SplitShard: closes `shardId`; returns the children owning [start, newStartingHashKey) and the rest. */
  def splitShard(stream: String, shardId: String, newStartingHashKey: BigInt): (String, String) = synchronized {
    val parent = openShard(stream, shardId)
    val r = parent.range
    require(
      newStartingHashKey > r.startingHashKey && newStartingHashKey <= r.endingHashKey,
      s"new starting hash key $newStartingHashKey must lie inside (${r.startingHashKey}, ${r.endingHashKey}]")
    parent.endingSequenceNumber = Some(nextSequenceNumber())
    val left = addShard(stream, Some(shardId), None, HashKeyRange(r.startingHashKey, newStartingHashKey - 1))
    val right = addShard(stream, Some(shardId), None, HashKeyRange(newStartingHashKey, r.endingHashKey))
    (left.id, right.id)
  }

  /** MergeShards: closes both adjacent shards; returns the child, whose parents are `shardId` and `adjacentShardId`. */
  def mergeShards(stream: String, shardId: String, adjacentShardId: String): String = synchronized {
    val (a, b) = (openShard(stream, shardId), openShard(stream, adjacentShardId))
    val (low, high) = if (a.range.startingHashKey < b.range.startingHashKey) (a, b) else (b, a)
    require(
      low.range.endingHashKey + 1 == high.range.startingHashKey,
      s"shards '$shardId' and '$adjacentShardId' are not adjacent")
    a.endingSequenceNumber = Some(nextSequenceNumber())
    b.endingSequenceNumber = Some(nextSequenceNumber())
    addShard(
      stream,
      Some(shardId),
      Some(adjacentShardId),
      HashKeyRange(low.range.startingHashKey, high.range.endingHashKey)).id
  }

  /**
   * Every iterator issued for the shard from now on, except one AT_SEQUENCE_NUMBER of a retained record, meets `pages`
   * empty pages (MillisBehindLatest above 0) first. Their MillisBehindLatest is the next record's age, or
   * `millisBehindLatest` when given: about the retention period, as AWS answers near the trim horizon.
   */
  def emptyPagesAhead(stream: String, shardId: String, pages: Int, millisBehindLatest: Option[Long] = None): Unit =
    synchronized {
      val shard = shardOf(stream, shardId)
      shard.emptyPagesPerIterator = pages
      shard.emptyPageLag = millisBehindLatest
    }

  /**
   * From now on each GetRecords call first takes one of `permits`, waiting for it, so that a test decides how many
   * calls a reader on a thread of its own makes before the test moves on; None lifts the gate (release the permits a
   * waiting call needs first).
   */
  def gateGetRecords(permits: Option[Semaphore]): Unit = getRecordsPermits = permits

  /**
   * From now on each GetRecords call moves the fake's [[ManualClock]] on by `ms`, as calls take time on AWS, the last
   * `afterAnswerMs` of them after the answer ([[RecordBatch.msAfterAnswer]]: a large page's transfer).
   */
  def eachGetRecordsTakes(ms: Long, afterAnswerMs: Long = 0L): Unit = synchronized {
    require(clock.isInstanceOf[ManualClock], "eachGetRecordsTakes needs a fake built on a ManualClock")
    getRecordsTakesMs = ms
    getRecordsAfterAnswerMs = afterAnswerMs
  }

  /** Deletes a stream and creates it anew under the same name, with new shards and new sequence numbers. */
  def recreateStream(name: String, shardCount: Int): Seq[String] = synchronized {
    streams.remove(name)
    createStream(name, shardCount)
  }

  /** Retention expiry of the `count` oldest records of a shard: TRIM_HORIZON and old iterators move past them. */
  def trimShard(stream: String, shardId: String, count: Int): Unit =
    synchronized { shardOf(stream, shardId).trim(count) }

  /** Retention expiry of a whole shard: it leaves ListShards, and calls naming it get [[ResourceMissingException]]. */
  def deleteShard(stream: String, shardId: String): Unit = synchronized {
    shardOf(stream, shardId)
    shardsOf(stream).remove(shardId)
  }

  // ---- internals ----

  /** Where `start` lies in `shard`, as GetShardIterator and SubscribeToShard both resolve it. */
  private def positionOf(streamName: String, shard: FakeShard, start: IteratorStart): Int = start match {
    case IteratorStart.TrimHorizon => shard.trimmed
    case IteratorStart.Latest => shard.end
    case IteratorStart.AtTimestamp(millis) =>
      if (millis > clock()) throw new TimestampInFutureException(s"timestamp $millis is in the future")
      shard.firstPosition(_.approximateArrivalTimestampMillis >= millis)
    case IteratorStart.AtSequenceNumber(seq) =>
      val n = sequenceIn(shard, streamName, seq)
      shard.firstPosition(r => BigInt(r.sequenceNumber) >= n)
    case IteratorStart.AfterSequenceNumber(seq) =>
      val n = sequenceIn(shard, streamName, seq)
      shard.firstPosition(r => BigInt(r.sequenceNumber) > n)
  }

  /** For FakeFanOut: the shard's state, under this client's lock. */
  private[client] def shardFor(stream: String, shardId: String): FakeShard = shardOf(stream, shardId)
  private[client] def children(stream: String, shardId: String): Seq[String] = childrenOf(stream, shardId)
  private[client] def newSequenceNumbers(n: Int): Vector[BigInt] = Vector.fill(n)(nextSequenceNumber())

  private def begin(operation: String): Unit = {
    calls = calls.updated(operation, calls(operation) + 1)
    if (closed) throw new IllegalStateException(s"$operation on a closed FakeKinesisClient")
    pendingFailure.foreach { e =>
      pendingFailure = None
      throw e
    }
    failingCalls.get(operation).foreach { case (n, e) =>
      if (n <= 1) failingCalls.remove(operation) else failingCalls(operation) = (n - 1, e)
      throw e()
    }
  }

  /** A stream by name or ARN, as tests and [[FakeFanOut]] name it (no request to check). */
  private def shardsOf(stream: String): mutable.LinkedHashMap[String, FakeShard] = {
    val name = StreamRef.nameOf(stream)
    streams.getOrElse(name, throw new ResourceMissingException(s"stream '$stream' not found"))
  }

  /**
   * The stream a request names, as AWS resolves StreamName and StreamARN: a name must be a name (an ARN there is an
   * InvalidArgumentException) and names a stream of the caller's account; an ARN names any account's stream.
   */
  private[client] def addressed(streamName: Option[String], streamArn: Option[String]): String = synchronized {
    resolve(streamName, streamArn)
  }

  private def resolve(streamName: Option[String], streamArn: Option[String]): String = (streamName, streamArn) match {
    case (Some(name), None) =>
      if (!StreamNamePattern.pattern.matcher(name).matches()) {
        throw new RequestRefusedException(s"InvalidArgumentException: 1 validation error detected: Value '$name' at " +
          "'streamName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
      }
      if (!streams.contains(name) || accounts(name) != FakeFanOut.Account) {
        throw new ResourceMissingException(s"Stream '$name' under account ${FakeFanOut.Account} not found.")
      }
      name
    case (None, Some(arn)) =>
      val name = StreamRef.nameOf(arn)
      if (!streams.contains(name) || FakeFanOut.streamArn(name, accounts(name)) != arn) {
        throw new ResourceMissingException(s"Stream $arn not found.")
      }
      name
    case _ => throw new RequestRefusedException("InvalidArgumentException: give either StreamName or StreamARN")
  }

  private def shardOf(stream: String, shardId: String): FakeShard =
    shardsOf(stream).getOrElse(
      shardId,
      throw new ResourceMissingException(s"shard '$shardId' of stream '$stream' not found"))

  private def openShard(stream: String, shardId: String): FakeShard = {
    val shard = shardOf(stream, shardId)
    require(!shard.isClosed, s"shard '$shardId' of stream '$stream' is closed")
    shard
  }

  private def childrenOf(stream: String, shardId: String): Seq[String] =
    shardsOf(stream).values.filter(s => s.parent.contains(shardId) || s.adjacentParent.contains(shardId))
      .map(_.id).toVector

  /** A sequence number that `shard` could have issued, as Kinesis validates AT/AFTER_SEQUENCE_NUMBER. */
  private def sequenceIn(shard: FakeShard, stream: String, text: String): BigInt = {
    val n =
      try BigInt(text)
      catch {
        case _: NumberFormatException =>
          throw new KinesisClientException(s"GetShardIterator: '$text' is not a sequence number")
      }
    if (n < shard.startingSequenceNumber || n > shard.endingSequenceNumber.getOrElse(lastSequenceNumber)) {
      throw new KinesisClientException(
        s"GetShardIterator: sequence number $text did not come from shard '${shard.id}' of stream '$stream'")
    }
    n
  }

  private def addShard(
      stream: String,
      parent: Option[String],
      adjacent: Option[String],
      range: HashKeyRange): FakeShard = {
    val name = StreamRef.nameOf(stream)
    val index = shardCounters(name)
    shardCounters(name) = index + 1
    val shard = new FakeShard(f"shardId-$index%012d", parent, adjacent, range, nextSequenceNumber())
    streams(name)(shard.id) = shard
    shard
  }

  private def append(shard: FakeShard, partitionKey: String, data: Array[Byte]): String = {
    val sequenceNumber = nextSequenceNumber().toString
    shard.append(KinesisRecord(data.clone(), partitionKey, sequenceNumber, clock()))
    sequenceNumber
  }

  /** Refuses a record over the stream's limit, as Kinesis does (ValidationException). */
  private def checkSize(stream: String, partitionKey: String, data: Array[Byte]): Unit = {
    val limit = maxRecordSizes.getOrElse(stream, 1024) * 1024L
    val size = partitionKey.getBytes(UTF_8).length.toLong + data.length
    if (size > limit) {
      throw new RequestRefusedException(s"PutRecord on stream '$stream': a record of $size bytes is over the " +
        s"stream's limit of $limit bytes (ValidationException)")
    }
  }

  /** How many of `records` one GetRecords answer holds: at most 10 MiB of data, but at least one record. */
  private def pageSize(records: Seq[KinesisRecord]): Int = {
    var bytes = 0L
    val within = records.indexWhere { r => bytes += r.data.length; bytes > MaxPageBytes }
    if (within < 0) records.size else math.max(1, within)
  }

  private def nextSequenceNumber(): BigInt = {
    lastSequenceNumber += 1
    lastSequenceNumber
  }
}

object FakeKinesisClient {

  /** 49 followed by 54 digits: every sequence number the fake issues has 56 digits, as on AWS. */
  private val SequenceBase = BigInt("49" + "0" * 54)
  private val StreamNamePattern = "[a-zA-Z0-9_.-]{1,128}".r
  private val HashSpace = BigInt(2).pow(128)
  private val MaxHashKey = HashSpace - 1
  private val MaxPageBytes = 10L * 1024 * 1024
}
