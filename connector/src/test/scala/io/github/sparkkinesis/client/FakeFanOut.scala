package io.github.sparkkinesis.client

import scala.collection.mutable

/**
 * The enhanced fan-out side of [[FakeKinesisClient]], called under its lock: consumers (CREATING for `activationMillis`
 * after registration, at most 20 per stream, with at most 50 tags) and subscriptions as AWS serves them.
 *
 * A subscription sends up to `recordsPerEvent` records per event; an empty event with MillisBehindLatest 0 once it is
 * caught up, then one every `heartbeatMillis` while nothing new arrives (Kinesis keeps an idle subscription alive with
 * such events; a reader waiting for more in between gets None, and a [[ManualClock]] moves on by the wait); it
 * completes `lifetimeMillis` (5 minutes) after it opened, or after `eventsPerSubscription` events. After
 * [[dropConnectionsSilently]] the open subscriptions send nothing more, neither events nor an error, as a stream fallen
 * silent on a connection that still answers the SDK's PINGs. A new subscribe for the same consumer and shard while one
 * opened less than 5 s ago is still open is refused with [[SubscriptionBusyException]]; a later one ends the open one.
 * At a closed shard's end the last event names the child shards, unless `sendChildShards` is false (kinesis-mock never
 * does: then a caught-up subscription to a closed shard just sends nothing more).
 */
final class FakeFanOut(owner: FakeKinesisClient, clock: () => Long) {
  import FakeFanOut._

  var activationMillis = 0L
  var recordsPerEvent = 10000
  var lifetimeMillis: Long = 5 * 60 * 1000L
  var eventsPerSubscription: Int = Int.MaxValue
  var sendChildShards = true
  var heartbeatMillis = 5000L

  private val consumers = mutable.LinkedHashMap.empty[String, FakeConsumer]
  private val open = mutable.Map.empty[(String, String), FakeSubscription]
  private val opened = mutable.Map.empty[(String, String), Long]
  private var created = 0L

  /** Subscriptions opened and not yet ended or cancelled. */
  def openSubscriptions: Int = owner.synchronized(open.size)

  /** Every open subscription fails at its next read, as after a connection reset. */
  def resetConnections(): Unit = owner.synchronized {
    open.values.foreach(_.pending =
      Some(SubscriptionSignal.Failed(new KinesisClientException("Connection reset (injected)"))))
  }

  /** Every open subscription goes silent for good: no event, no error, no end (its stream died unnoticed). */
  def dropConnectionsSilently(): Unit = owner.synchronized(open.values.foreach(_.silent = true))

  def consumerNames: Seq[String] = owner.synchronized(consumers.values.map(_.name).toVector)

  private[client] def describe(p: FakeConsumer => Boolean): Option[ConsumerDescription] =
    consumers.values.find(p).map(describe)

  /**
   * Whether the caller may tag consumers (kinesis:TagResource): without it, AWS refuses TagResource and a registration
   * with tags (AccessDeniedException).
   */
  var mayTag = true

  /** kinesis-mock accepts RegisterStreamConsumer's tags and drops them (TagResource keeps them); AWS keeps them. */
  var dropsRegistrationTags = false

  private val tags = mutable.Map.empty[String, Map[String, String]]

  /** Every consumer of the stream, as ListStreamConsumers lists them. */
  private[client] def list(streamArn: String): Seq[ConsumerDescription] =
    consumers.values.filter(_.streamArn == streamArn).map(describe).toVector

  private[client] def tagsOf(arn: String): Map[String, String] = {
    if (!consumers.contains(arn)) throw new ResourceMissingException(s"ListTagsForResource: no consumer $arn")
    tags.getOrElse(arn, Map.empty)
  }

  private[client] def tag(arn: String, added: Map[String, String]): Unit = {
    if (!consumers.contains(arn)) throw new ResourceMissingException(s"TagResource: no consumer $arn")
    tags(arn) = checkedTags("TagResource", tags.getOrElse(arn, Map.empty) ++ added)
  }

  private def checkedTags(operation: String, all: Map[String, String]): Map[String, String] = {
    if (!mayTag) throw new AccessException(s"$operation: not authorized to perform kinesis:TagResource (AccessDenied)")
    if (all.size > 50) throw new KinesisClientException(s"$operation: more than 50 tags (InvalidArgumentException)")
    all
  }

  private[client] def register(streamArn: String, name: String, given: Map[String, String]): ConsumerDescription = {
    if (given.nonEmpty) checkedTags("RegisterStreamConsumer", given)
    if (consumers.values.exists(c => c.streamArn == streamArn && c.name == name)) {
      throw new KinesisClientException(
        s"RegisterStreamConsumer: consumer $name exists already (ResourceInUseException)")
    }
    if (consumers.values.count(_.streamArn == streamArn) >= 20) {
      throw new KinesisClientException(s"RegisterStreamConsumer: stream $streamArn has 20 consumers (LimitExceeded)")
    }
    created += 1
    val createdAt = clock() + created // distinct creation times, hence distinct ARNs, for re-registered names
    val consumer =
      FakeConsumer(name, streamArn, s"$streamArn/consumer/$name:$createdAt", createdAt, clock() + activationMillis)
    consumers(consumer.arn) = consumer
    if (!dropsRegistrationTags && given.nonEmpty) tags(consumer.arn) = given
    describe(consumer).copy(status = "CREATING")
  }

  private def describe(c: FakeConsumer): ConsumerDescription =
    ConsumerDescription(c.name, c.arn, if (clock() >= c.activeAt) "ACTIVE" else "CREATING", c.createdAt)

  private[client] def deregister(arn: String): Unit = {
    consumers.remove(arn).getOrElse(throw new ResourceMissingException(s"DeregisterStreamConsumer: no consumer $arn"))
    tags.remove(arn)
    open.keys.filter(_._1 == arn).toList.foreach { key =>
      open.remove(key).foreach(_.pending =
        Some(SubscriptionSignal.Failed(new ResourceMissingException(s"consumer $arn is gone"))))
    }
  }

  private[client] def activeConsumer(arn: String): FakeConsumer = {
    val consumer = consumers.getOrElse(arn, throw new ResourceMissingException(s"SubscribeToShard: no consumer $arn"))
    if (!describe(consumer).isActive)
      throw new SubscriptionBusyException(s"SubscribeToShard: consumer $arn is not ACTIVE")
    consumer
  }

  private[client] def open(consumer: FakeConsumer, shardId: String, position: Int): ShardSubscription = {
    val key = consumer.arn -> shardId
    if (open.contains(key) && opened.get(key).exists(clock() - _ < 5000L)) {
      throw new SubscriptionBusyException(
        s"SubscribeToShard: shard $shardId was subscribed less than 5 s ago (ResourceInUse)")
    }
    open.remove(key).foreach(_.pending = Some(SubscriptionSignal.Failed(new SubscriptionBusyException("replaced"))))
    opened(key) = clock()
    val subscription = new FakeSubscription(key, consumer.stream, shardId, position, clock())
    open(key) = subscription
    subscription
  }

  private final class FakeSubscription(
      key: (String, String),
      stream: String,
      shardId: String,
      var position: Int,
      openedAt: Long) extends ShardSubscription {
    var pending: Option[SubscriptionSignal] = None
    var silent = false
    private var events = 0
    private var lastEventAt = openedAt
    private var reportedTip = false
    private var done = false

    override def next(timeoutMs: Long): Option[SubscriptionSignal] = owner.synchronized {
      pending.map { p => pending = None; done = true; p }.orElse {
        if (done) None
        else if (silent) waitOut(timeoutMs)
        else if (clock() - openedAt >= lifetimeMillis || events >= eventsPerSubscription)
          finish(SubscriptionSignal.Completed)
        else {
          val shard = owner.shardFor(stream, shardId)
          val from = math.max(position, shard.trimmed)
          val until = math.min(shard.end, from + recordsPerEvent)
          val atEnd = until == shard.end
          val children = if (atEnd && shard.isClosed && sendChildShards) owner.children(stream, shardId) else Nil
          if (from < until || children.nonEmpty || !reportedTip) {
            val records = shard.slice(from, until)
            position = until
            events += 1
            reportedTip = atEnd
            if (children.nonEmpty) done = true
            val lag = if (atEnd) 0L else math.max(1L, clock() - records.last.approximateArrivalTimestampMillis)
            lastEventAt = clock()
            Some(SubscriptionSignal.Event(records, records.lastOption.map(_.sequenceNumber), lag, children))
          } else heartbeat(timeoutMs)
        }
      }
    }

    /**
     * An empty event at the tip once `heartbeatMillis` have passed since the last event, if that is within the wait.
     */
    private def heartbeat(timeoutMs: Long): Option[SubscriptionSignal] = {
      val dueInMs = lastEventAt + heartbeatMillis - clock()
      if (dueInMs > timeoutMs) waitOut(timeoutMs)
      else {
        clock match {
          case manual: ManualClock => manual.advance(math.max(0L, dueInMs))
          case _ => if (dueInMs > 0) return waitOut(timeoutMs) // on the wall clock: the next look sends it
        }
        events += 1
        lastEventAt = clock()
        Some(SubscriptionSignal.Event(Nil, None, 0L, Nil))
      }
    }

    /** Nothing came: a [[ManualClock]] moves on by the wait, the wall clock waits a little, as a real wait would. */
    private def waitOut(timeoutMs: Long): Option[SubscriptionSignal] = {
      clock match {
        case manual: ManualClock => manual.advance(timeoutMs)
        case _ => if (timeoutMs > 0) owner.wait(math.min(timeoutMs, 20L))
      }
      None
    }

    private def finish(signal: SubscriptionSignal): Option[SubscriptionSignal] = {
      done = true
      open.get(key).filter(_ eq this).foreach(_ => open.remove(key))
      Some(signal)
    }

    override def cancel(): Unit = owner.synchronized {
      done = true
      open.get(key).filter(_ eq this).foreach(_ => open.remove(key))
    }
  }
}

object FakeFanOut {

  /** The account of the fake's caller; streams of other accounts are reachable only by ARN. */
  val Account = "123456789012"

  def streamArn(stream: String, account: String = Account): String =
    s"arn:aws:kinesis:us-east-1:$account:stream/$stream"

  private[client] final case class FakeConsumer(
      name: String,
      streamArn: String,
      arn: String,
      createdAt: Long,
      activeAt: Long) {
    def stream: String = streamArn.split("/")(1)
  }
}
