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
 * opened less than 5 s ago is still open is refused with [[SubscriptionBusyException]] (ResourceInUseException); a
 * later one ends the open one. The refusal is thrown by the call, or, with `refusalsAsSignals`, handed out as the new
 * subscription's first signal, as the SDK's asynchronous client delivers it. Every event carries a continuation
 * sequence number, where the subscription stands (even an empty one: the number before its position), except a closed
 * shard's last event, which names the child shards instead and is followed by the subscription's end; unless
 * `sendChildShards` is false (kinesis-mock never names them: then a caught-up subscription to a closed shard just sends
 * nothing more). With `finalEventApart` that last event comes on its own, without records, as FLINK-39540 saw AWS send
 * it. A record reaches subscriptions `pushDelayMillis` after its arrival (0; AWS's propagation delay is about 70 ms),
 * the reader's polling granularity then 5 ms instead of 20.
 */
final class FakeFanOut(owner: FakeKinesisClient, clock: () => Long) {
  import FakeFanOut._

  var activationMillis = 0L
  var recordsPerEvent = 10000
  var lifetimeMillis: Long = 5 * 60 * 1000L
  var eventsPerSubscription: Int = Int.MaxValue
  var sendChildShards = true
  var heartbeatMillis = 5000L
  var pushDelayMillis = 0L

  /**
   * Empty events (MillisBehindLatest above 0) that follow each event with records at once, already arrived when the
   * reader asks, as AWS pushes them across a sparse stretch of a shard without waiting (0).
   */
  var emptyEventsAfterRecords = 0

  /** Events every subscription has sent so far. */
  @volatile var eventsSent = 0L
  var refusalsAsSignals = false
  var finalEventApart = false

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

  /**
   * Registers consumer `name` of the stream with ARN `streamArn`, which may belong to an account whose streams the fake
   * does not hold (another account's stream of a name the fake's caller also has, shared by its resource policy).
   */
  def registerOnAnyStream(streamArn: String, name: String): ConsumerDescription =
    owner.synchronized(register(streamArn, name, Map.empty))

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

  /**
   * Registrations that take effect while their caller never hears so (a timed-out call): the SDK's retry is then
   * refused, the consumer of that name existing (ResourceInUseException), and that refusal is what the caller gets.
   */
  var registrationAnswersLost = 0

  private[client] def register(streamArn: String, name: String, given: Map[String, String]): ConsumerDescription = {
    if (given.nonEmpty) checkedTags("RegisterStreamConsumer", given)
    if (consumers.values.exists(c => c.streamArn == streamArn && c.name == name)) throw nameInUse(name)
    if (consumers.values.count(_.streamArn == streamArn) >= 20) {
      throw new KinesisClientException(s"RegisterStreamConsumer: stream $streamArn has 20 consumers (LimitExceeded)")
    }
    created += 1
    val createdAt = clock() + created // distinct creation times, hence distinct ARNs, for re-registered names
    val consumer =
      FakeConsumer(name, streamArn, s"$streamArn/consumer/$name:$createdAt", createdAt, clock() + activationMillis)
    consumers(consumer.arn) = consumer
    if (!dropsRegistrationTags && given.nonEmpty) tags(consumer.arn) = given
    if (registrationAnswersLost > 0) {
      registrationAnswersLost -= 1
      throw nameInUse(name)
    }
    describe(consumer).copy(status = "CREATING")
  }

  private def nameInUse(name: String) =
    new KinesisClientException(s"RegisterStreamConsumer: consumer $name exists already (ResourceInUseException)")

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

  /**
   * A stretch of `events` empty events (MillisBehindLatest `millisBehindLatest`, above 0) at the shard's current end,
   * as AWS pushes a sparse or old part of a shard (awslabs/spark-sql-kinesis-connector#91): a subscription that starts
   * there (at any start but one after a later record) gets them first, each with a continuation sequence number of its
   * own, then the records put from now on; one that starts after one of those numbers gets only the rest.
   */
  def emptyEventsAhead(stream: String, shardId: String, events: Int, millisBehindLatest: Long = 60000L): Unit =
    owner.synchronized {
      val shard = owner.shardFor(stream, shardId)
      shard.emptyEvents = owner.newSequenceNumbers(events)
      shard.emptyEventsAt = shard.end
      shard.emptyEventLag = millisBehindLatest
    }

  private[client] def open(
      consumer: FakeConsumer,
      shardId: String,
      position: Int,
      start: IteratorStart): ShardSubscription = {
    val key = consumer.arn -> shardId
    if (open.contains(key) && opened.get(key).exists(clock() - _ < 5000L)) {
      val refused =
        new SubscriptionBusyException(
          s"SubscribeToShard: shard $shardId was subscribed less than 5 s ago (ResourceInUse)")
      if (!refusalsAsSignals) throw refused
      val failed = new FakeSubscription(key, consumer.stream, shardId, position, Vector.empty, clock())
      failed.pending = Some(SubscriptionSignal.Failed(refused))
      return failed
    }
    open.remove(key).foreach(_.pending = Some(SubscriptionSignal.Failed(new SubscriptionBusyException("replaced"))))
    opened(key) = clock()
    val shard = owner.shardFor(consumer.stream, shardId)
    val stretch = if (position != shard.emptyEventsAt) Vector.empty
    else start match {
      case IteratorStart.AfterSequenceNumber(seq) => shard.emptyEvents.filter(_ > BigInt(seq))
      case IteratorStart.AtSequenceNumber(seq) => shard.emptyEvents.filter(_ >= BigInt(seq))
      case _ => shard.emptyEvents
    }
    val subscription = new FakeSubscription(key, consumer.stream, shardId, position, stretch, clock())
    open(key) = subscription
    subscription
  }

  private final class FakeSubscription(
      key: (String, String),
      stream: String,
      shardId: String,
      var position: Int,
      var emptyAhead: Vector[BigInt],
      openedAt: Long) extends ShardSubscription {
    var pending: Option[SubscriptionSignal] = None
    var silent = false
    private var events = 0
    private var emptiesDue = 0
    private var lastEventAt = openedAt
    private var reportedTip = false
    private var done = false

    override def next(timeoutMs: Long): Option[SubscriptionSignal] = owner.synchronized {
      pending.map { p => pending = None; done = true; p }.orElse {
        if (done || silent) waitOut(timeoutMs) // a wait on an ended subscription takes its time, as on AWS
        else if (emptiesDue > 0) {
          emptiesDue -= 1
          event(Nil, Some(continuationAt(owner.shardFor(stream, shardId), position)), 60000L)
        } else if (clock() - openedAt >= lifetimeMillis || events >= eventsPerSubscription)
          finish(SubscriptionSignal.Completed)
        else if (emptyAhead.nonEmpty) {
          val continuation = emptyAhead.head.toString
          emptyAhead = emptyAhead.tail
          event(Nil, Some(continuation), owner.shardFor(stream, shardId).emptyEventLag)
        } else {
          val shard = owner.shardFor(stream, shardId)
          val from = math.max(position, shard.trimmed)
          val pushed = shard.slice(from, math.min(shard.end, from + recordsPerEvent))
            .takeWhile(_.approximateArrivalTimestampMillis <= clock() - pushDelayMillis)
          val until = from + pushed.size
          // At the tip of what has been pushed: records still on their way (the push delay) are not behind yet.
          val atEnd = until == shard.end || pushed.size < math.min(shard.end - from, recordsPerEvent)
          val closing = atEnd && shard.isClosed && sendChildShards && (from == until || !finalEventApart)
          val children = if (closing) owner.children(stream, shardId) else Nil
          if (from < until || children.nonEmpty || !reportedTip) {
            val records = pushed
            position = until
            reportedTip = atEnd
            // AWS ends the subscription after the shard's last event, which carries no continuation sequence number.
            if (children.nonEmpty) pending = Some(SubscriptionSignal.Completed)
            val lag = if (atEnd || records.isEmpty) 0L
            else math.max(1L, clock() - records.last.approximateArrivalTimestampMillis)
            val continuation = if (children.nonEmpty) None else Some(continuationAt(shard, until))
            if (records.nonEmpty) emptiesDue = emptyEventsAfterRecords
            owner.noteServed(shardId, records)
            event(records, continuation, lag, children)
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
        event(Nil, Some(continuationAt(owner.shardFor(stream, shardId), position)), 0L)
      }
    }

    private def event(
        records: Seq[KinesisRecord],
        continuation: Option[String],
        lag: Long,
        children: Seq[String] = Nil): Option[SubscriptionSignal] = {
      events += 1
      eventsSent += 1
      lastEventAt = clock()
      Some(SubscriptionSignal.Event(records, continuation, lag, children))
    }

    /** The sequence number just before `position`: a subscription after it goes on at `position`. */
    private def continuationAt(shard: FakeShard, position: Int): String =
      if (position > shard.trimmed) shard.slice(position - 1, position).head.sequenceNumber
      else shard.startingSequenceNumber.toString

    /** Nothing came: a [[ManualClock]] moves on by the wait, the wall clock waits a little, as a real wait would. */
    private def waitOut(timeoutMs: Long): Option[SubscriptionSignal] = {
      clock match {
        case manual: ManualClock => manual.advance(timeoutMs)
        case _ => if (timeoutMs > 0) owner.wait(math.min(timeoutMs, if (pushDelayMillis > 0) 5L else 20L))
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
