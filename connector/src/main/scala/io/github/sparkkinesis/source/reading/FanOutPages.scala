package io.github.sparkkinesis.source.reading

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException,
  Backoff,
  FanOutClient,
  IteratorStart,
  KinesisClient,
  KinesisClientException,
  KinesisRecord,
  RecordBatch,
  ResourceMissingException,
  ShardSubscription,
  SubscriptionBusyException,
  SubscriptionSignal,
  ThrottledException,
  TimestampInFutureException
}
import io.github.sparkkinesis.metrics.ReadMetrics
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.offsets.ShardPosition.{compareSequenceNumbers, AfterSequenceNumber, ShardEnd}
import io.github.sparkkinesis.source.planning.FailureWindow

/**
 * One shard's records from an enhanced fan-out subscription, as pages for a [[ShardReader]]. Records received are
 * buffered and handed out in pages of at most the size asked for; the position is just after the last record handed
 * out, so a task ends exactly where its reader decided, whatever the subscription has pushed.
 *
 * The subscription outlives the task: [[close]] parks it in the [[SubscriptionCache]] when the reader read to its end
 * and handed every row over, and the next task of the shard takes it if it starts where this one stopped, so a busy
 * shard's records arrive without a subscribe per batch. A reader cut short (a `limit`, a killed or failed task) cancels
 * it instead, and once closed it never subscribes again. A subscription that ends (every 5 minutes), fails or sends no
 * event for `subscribeTimeoutMs` while the reader waits for one, caught up or not (Kinesis sends events while a shard
 * is idle, the emulator every second; the SDK's HTTP/2 PING fails a lost TCP connection within seconds, but a stream
 * that falls silent on a connection that still answers PINGs would otherwise wait for the read timeout of minutes) is
 * replaced by one from just after the last event's continuation sequence number, or the last record received where that
 * lies further (records up to it are dropped if sent again): empty events with records ahead, which AWS pushes across a
 * sparse or old part of a shard, move it on too, so a stretch longer than one subscription is walked, not started again
 * from the same place. Subscribes are paced at one per second and shard, with jittered back-off after failures (a
 * ResourceInUse refusal too, thrown or sent as the subscription's first error), at most `maxRetries` in a row.
 *
 * The shard has ended when an event names its child shards (AWS), or, for a shard the driver's listing showed closed
 * (`listedClosed`), when caught up and a GetRecords from the last record finds nothing more (the emulator never names
 * child shards; a task never lists the stream). A reader that outlives reshards (real-time mode) makes that check every
 * `endCheckEveryMs` while caught up, whatever the listing showed. A check that is throttled is made again later, with
 * back-off, never failing the task; one that fails for another passing reason (a refused or reset connection) likewise,
 * for at most `failureTimeoutMs` in a row. Caught up means the last event said MillisBehindLatest 0 and every record
 * received was handed out; a subscription taken over from an earlier task waits at most [[FanOutPages.TipWaitMs]] for
 * an event before it trusts that, so an idle shard never holds a task.
 */
private[sparkkinesis] final class FanOutPages(
    client: FanOutClient,
    polling: KinesisClient,
    stream: String,
    shardId: String,
    start: ShardPosition,
    listedClosed: Boolean,
    settings: FanOutReaderSettings,
    backoff: Backoff,
    cache: SubscriptionCache,
    clock: () => Long,
    sleep: Long => Unit = Thread.sleep,
    endCheckEveryMs: Option[Long] = None,
    failureTimeoutMs: Long,
    override val metrics: ReadMetrics = ReadMetrics.detached) extends ShardPages {
  import FanOutPages._

  private val log = LoggerFactory.getLogger(getClass)
  private val key = SubscriptionKey(settings.consumerArn, shardId)
  @volatile private var subscription: Option[ShardSubscription] = None

  /** Guards subscribing against closing: a closed reader never subscribes again. */
  private val lock = new Object
  @volatile private var closed = false

  /** Whether a fetch is under way: a reader closed then (from another thread) is cut short mid-page. */
  @volatile private var fetching = false
  private var buffered = Vector.empty[KinesisRecord]

  /** The last record handed out; the position is just after it. */
  private var lastReturned: Option[String] = None

  /** The last record the subscriptions delivered; a new subscription starts after it. */
  private var lastReceived: Option[String] = None

  /** The last event's continuation sequence number (none in a closed shard's last event): where it stood. */
  private var continuedTo: Option[String] = None
  private var lastPage: Seq[KinesisRecord] = Nil

  /** The last record handed out before `lastPage`. */
  private var beforePage: Option[String] = None
  private var millisBehind: Option[Long] = None

  /** Whether `millisBehind` came from an event this task received (a taken-over one may be stale). */
  private var millisBehindFresh = false
  private var finalEventSeen = false
  private var closedChecked = false

  /** When the shard's end was last checked; a shard not listed closed is first checked one interval in. */
  private var endCheckedAtMs: Option[Long] = if (listedClosed) None else Some(clock())

  /** When an end check that went unanswered (throttled, failed) may be made again. */
  private var endCheckRetryAtMs = Long.MinValue
  private val endCheckBackoff = new Backoff(EndCheckRetryBaseMs, EndCheckRetryMaxMs)
  private val endCheckFailures =
    new FailureWindow(s"Checking whether shard $shardId of stream $stream has ended", failureTimeoutMs, clock)

  /** When the current subscription last sent a signal, or was opened (by `clock`): how long it has been silent. */
  private var lastSignalAtMs = clock()
  private var ended = start == ShardEnd
  private var healthy = true
  private var failuresInARow = 0
  private var refused = 0L
  private var subscribes = 0L

  cache.take(key, start).foreach { p =>
    subscription = Some(p.subscription)
    buffered = p.buffered
    lastReceived = p.lastReceived
    millisBehind = p.millisBehind
    finalEventSeen = p.finalEventSeen
    lastSignalAtMs = p.lastSignalAtMs
    continuedTo = p.continuedTo
  }

  override def getRecordsCalls: Long = 0L

  override def throttledCalls: Long = refused

  /** SubscribeToShard calls this reader made. */
  def subscribeCalls: Long = subscribes

  override def position: ShardPosition =
    if (ended) ShardEnd else lastReturned.map(AfterSequenceNumber).getOrElse(start)

  override def isEnded: Boolean = ended

  override def fetch(deadlineMs: Long, limit: Int): Option[RecordBatch] = {
    require(!ended, s"shard $shardId of stream $stream was already read to its end")
    fetching = true
    try fetchPage(deadlineMs, limit)
    finally fetching = false
  }

  private def fetchPage(deadlineMs: Long, limit: Int): Option[RecordBatch] = {
    healthy = false
    while (buffered.isEmpty && !finalEventSeen) {
      if (caughtUp && millisBehindFresh) {
        healthy = true
        return Some(atTip())
      }
      val waitMs = if (caughtUp) TipWaitMs else settings.subscribeTimeoutMs
      val remaining = deadlineMs - clock()
      if (remaining <= 0) {
        healthy = true
        return None
      }
      if (!receive(math.min(waitMs, remaining)) && caughtUp) {
        healthy = true
        return Some(atTip()) // a taken-over subscription, caught up when parked, and nothing new since
      }
    }
    absorbArrived(limit)
    healthy = true
    Some(page(math.max(1, limit)))
  }

  /**
   * Takes in the events that have already arrived, without waiting, until `limit` records are buffered or an event
   * brings no record: a page holds everything received so far, as a GetRecords page holds everything available, however
   * small the events are, and records received are never held back behind a run of empty events (AWS pushes those
   * across a sparse stretch of a shard as fast as they are asked for).
   */
  private def absorbArrived(limit: Int): Unit = {
    var more = true
    while (more && buffered.size < limit && !finalEventSeen && subscription.isDefined) {
      val before = buffered.size
      more = receive(0L) && buffered.size > before
    }
  }

  override def rewind(to: ShardPosition): Unit = {
    val before = beforePage.map(AfterSequenceNumber).getOrElse(start)
    val keep = to match {
      case AfterSequenceNumber(seq) if lastPage.exists(_.sequenceNumber == seq) =>
        lastPage.indexWhere(_.sequenceNumber == seq) + 1
      case _ if to == before => 0
      case other => throw new IllegalArgumentException(s"cannot rewind shard $shardId of stream $stream to $other")
    }
    // The records after `to` go back in front of the buffer: the subscription stays where it is.
    buffered = lastPage.drop(keep).toVector ++ buffered
    lastPage = lastPage.take(keep)
    lastReturned = lastPage.lastOption.map(_.sequenceNumber).orElse(beforePage)
    ended = false
  }

  /**
   * Parks the subscription only if the reader handed over every record up to [[position]] and is between pages; the
   * next task takes it only if it starts exactly there. Anything else cancels it: a position whose records were not
   * handed over must never be where a later task goes on from.
   */
  override def close(handedOver: Boolean): Unit = lock.synchronized {
    closed = true
    subscription.foreach { s =>
      subscription = None
      if (handedOver && healthy && !fetching && !ended) {
        cache.park(
          key,
          ParkedSubscription(
            s,
            position,
            buffered,
            lastReceived,
            millisBehind,
            finalEventSeen,
            lastSignalAtMs,
            continuedTo))
      } else s.cancel()
    }
  }

  private def caughtUp: Boolean = buffered.isEmpty && millisBehind.contains(0L)

  /** Hands out up to `limit` buffered records; the last page of a shard that ended has no next iterator. */
  private def page(limit: Int): RecordBatch = {
    val (taken, rest) = buffered.splitAt(limit)
    buffered = rest
    beforePage = lastReturned
    lastPage = taken
    taken.lastOption.foreach(r => lastReturned = Some(r.sequenceNumber))
    if (buffered.isEmpty && (finalEventSeen || (millisBehind.contains(0L) && endReached))) ended = true
    // At the tip only if this task heard so: a lag from an event an earlier task received may be stale.
    val lag = if (buffered.isEmpty && millisBehindFresh) millisBehind.getOrElse(1L)
    else math.max(1L, millisBehind.getOrElse(1L))
    RecordBatch(taken, if (ended) None else Some(SubscriptionMarker), lag)
  }

  /** Caught up with nothing new: an empty page at the tip, or the shard's end if it is closed. */
  private def atTip(): RecordBatch = {
    beforePage = lastReturned
    lastPage = Nil
    if (endReached) ended = true
    RecordBatch(Nil, if (ended) None else Some(SubscriptionMarker), 0L)
  }

  /**
   * Whether the shard is closed and nothing follows the last record received: the driver's listing showed it closed,
   * and a GetRecords from there finds no record and no next iterator. Answered at most once per task, only when the
   * subscription has nothing more to give: AWS names the child shards in the last event, but kinesis-mock never does
   * and goes on sending empty events, with a lag that says nothing about the shard's end. A shard that closes while its
   * task reads is ended by the next look (the driver's check, or the next task). A check Kinesis does not answer
   * (throttled, a passing failure) counts as not ended and is made again after a back-off.
   */
  private def endReached: Boolean = endCheckDue && clock() >= endCheckRetryAtMs && {
    endCheckedAtMs = Some(clock())
    val from = lastReceived.map(IteratorStart.AfterSequenceNumber).orElse(start.iteratorStart).get
    try {
      metrics.getRecordsCalls.inc()
      val rest = polling.getRecords(stream, polling.shardIterator(stream, shardId, from), 1)
      closedChecked = true
      endCheckBackoff.reset()
      endCheckFailures.succeeded()
      val ended = rest.records.isEmpty && rest.nextIterator.isEmpty
      if (ended) log.info(s"Shard $shardId of stream $stream is closed and read to its end.")
      ended
    } catch {
      case e @ (_: AccessException | _: ResourceMissingException) => throw e
      case e: KinesisClientException =>
        if (e.isInstanceOf[ThrottledException]) {
          refused += 1
          metrics.throttledCalls.inc()
        } else {
          endCheckFailures.failed(e) // throws once failures have lasted failureTimeoutMs
          metrics.retries.inc()
        }
        endCheckRetryAtMs = clock() + endCheckBackoff.nextDelayMs()
        log.info(s"Checking whether shard $shardId of stream $stream has ended went unanswered; checking again " +
          s"later: ${e.getMessage}")
        false
    }
  }

  private def endCheckDue: Boolean = endCheckEveryMs match {
    case Some(every) => endCheckedAtMs.forall(clock() - _ >= every)
    case None => listedClosed && !closedChecked
  }

  override def awaitMore(maxWaitMs: Long): Unit = if (!ended && buffered.isEmpty && !finalEventSeen) {
    fetching = true
    try receive(maxWaitMs)
    finally fetching = false
  }

  /** Waits at most `waitMs` for the subscription's next signal and applies it; false when nothing came. */
  private def receive(waitMs: Long): Boolean = {
    val sub = subscription.orElse(subscribe()).getOrElse {
      millisBehind = Some(0L) // an AT_TIMESTAMP start in Kinesis' future: caught up, with nothing yet
      millisBehindFresh = true
      return false
    }
    val signal = sub.next(waitMs)
    if (signal.isDefined) lastSignalAtMs = clock()
    signal match {
      case Some(SubscriptionSignal.Event(records, continuation, lag, children)) =>
        failuresInARow = 0
        backoff.reset()
        val fresh = records.filter(r => lastReceived.forall(last => compareSequenceNumbers(r.sequenceNumber, last) > 0))
        buffered ++= fresh
        fresh.lastOption.foreach(r => lastReceived = Some(r.sequenceNumber))
        continuation.filter(ShardPosition.isSequenceNumber).foreach(c => continuedTo = Some(c))
        millisBehind = Some(lag)
        millisBehindFresh = true
        if (children.nonEmpty) {
          finalEventSeen = true
          log.info(s"Shard $shardId of stream $stream has ended; its children are ${children.mkString(", ")}")
        } else if (fresh.isEmpty && buffered.isEmpty && endReached) finalEventSeen = true
        true
      case Some(SubscriptionSignal.Completed) =>
        subscription = None // ended by design (5 minutes): the next receive subscribes again from where it stood
        metrics.subscriptionRenewals.inc()
        true
      case Some(SubscriptionSignal.Failed(error)) =>
        subscription = None
        failed(error)
        true
      case None if clock() - lastSignalAtMs >= settings.subscribeTimeoutMs =>
        sub.cancel()
        subscription = None
        millisBehind = None // a dead subscription's last lag says nothing: read on until the new one says where it is
        millisBehindFresh = false
        failed(new KinesisClientException(s"The subscription to shard $shardId of stream $stream sent nothing for " +
          s"${clock() - lastSignalAtMs} ms (option kinesis.subscribeToShard.timeout); subscribing again."))
        false
      case None => false
    }
  }

  /**
   * Subscribes from just after the last record received (else `start`), paced and retried; None for a start in Kinesis'
   * future. A reader closed or interrupted (its task cut short) never subscribes: it stops instead.
   */
  private def subscribe(): Option[ShardSubscription] = {
    var inFuture = false
    while (subscription.isEmpty && !inFuture) {
      cache.lastSubscribedAt(key).foreach { at =>
        val wait = math.min(MinSubscribeIntervalMs, at + MinSubscribeIntervalMs - clock()) // bounded if the clock jumps
        if (wait > 0) sleep(wait)
      }
      val from = resumeAfter.map(IteratorStart.AfterSequenceNumber).orElse(start.iteratorStart).getOrElse(
        throw new IllegalStateException(s"no subscription can start at the end of shard $shardId"))
      val refused = lock.synchronized {
        if (closed || Thread.currentThread().isInterrupted) {
          throw new InterruptedException(s"The reader of shard $shardId of stream $stream was closed: it subscribes " +
            "no more.")
        }
        cache.subscribed(key, clock())
        subscribes += 1
        metrics.subscribeToShardCalls.inc()
        try {
          subscription = Some(client.subscribeToShard(settings.consumerArn, shardId, from))
          lastSignalAtMs = clock()
          None
        } catch {
          case _: TimestampInFutureException => inFuture = true; None // nothing can have arrived at or after it yet
          case e: KinesisClientException => Some(e)
        }
      }
      refused.foreach(failed) // backs off outside the lock, so closing never waits for it
    }
    subscription
  }

  /** Where a new subscription goes on after: the later of the last record received and the last continuation. */
  private def resumeAfter: Option[String] =
    (lastReceived.toSeq ++ continuedTo).reduceOption((a, b) => if (compareSequenceNumbers(a, b) >= 0) a else b)

  /** Counts a failed or refused subscription and backs off, or fails the task when it cannot or should not go on. */
  private def failed(error: KinesisClientException): Unit = error match {
    case _: AccessException | _: ResourceMissingException => throw error
    case _ =>
      val refusedNow = error.isInstanceOf[SubscriptionBusyException] || error.isInstanceOf[ThrottledException]
      if (refusedNow) {
        refused += 1
        metrics.throttledCalls.inc()
      }
      failuresInARow += 1
      if (failuresInARow > settings.maxRetries) {
        throw new KinesisClientException(
          s"Subscribing to shard $shardId of stream $stream through consumer " +
            s"${settings.consumerArn} failed $failuresInARow times in a row (option " +
            s"kinesis.subscribeToShard.maxRetries " +
            s"is ${settings.maxRetries}): ${error.getMessage}",
          error)
      }
      if (!refusedNow) metrics.retries.inc()
      val delay = backoff.nextDelayMs()
      log.info(s"Subscription to shard $shardId of stream $stream: ${error.getMessage} Subscribing again in $delay ms.")
      sleep(delay)
  }
}

private[sparkkinesis] object FanOutPages {

  /** Kinesis allows one SubscribeToShard per second per shard and consumer. */
  val MinSubscribeIntervalMs = 1000L

  /**
   * How long a task waits for an event on a subscription that was caught up when the previous task parked it. Kinesis
   * pushes records within about 70 ms of their arrival; the emulator sends an event every second.
   */
  val TipWaitMs = 1200L

  /** Back-off between end checks Kinesis did not answer: from about the check's own interval up to half a minute. */
  private val EndCheckRetryBaseMs = 1000L
  private val EndCheckRetryMaxMs = 30000L

  /** Stands in a page's next iterator while the shard goes on: pages from a subscription have no iterators. */
  private val SubscriptionMarker = "subscription"
}
