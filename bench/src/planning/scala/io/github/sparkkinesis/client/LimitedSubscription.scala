package io.github.sparkkinesis.client

/**
 * One SubscribeToShard of a [[LimitedKinesis]] consumer, pushing at AWS's rate: its first event `pushDelayMs` after it
 * opened, then events of at most `maxEventBytes`, each after the one before has taken its bytes' time at
 * `pushBytesPerSecond`; at the tip one empty event (MillisBehindLatest 0), then nothing;
 * [[SubscriptionSignal.Completed]] `subscriptionMs` after it opened. A reader asking before the next event is due waits
 * for it, at most its timeout.
 */
final class LimitedSubscription(
    shard: LimitedShard,
    start: Int,
    limits: AwsLimits,
    lagAt: (Int, Long) => Long) extends ShardSubscription {

  private val openedAt = System.currentTimeMillis()
  private var position = start // guarded by this
  private var dueAt = openedAt + limits.pushDelayMs // guarded by this
  private var reportedTip = false // guarded by this
  @volatile private var done = false

  override def next(timeoutMs: Long): Option[SubscriptionSignal] = synchronized {
    val now = System.currentTimeMillis()
    if (done) {
      Thread.sleep(math.min(timeoutMs, 20L))
      None
    } else if (now - openedAt >= limits.subscriptionMs) {
      done = true
      Some(SubscriptionSignal.Completed)
    } else if (position >= shard.records && reportedTip) {
      Thread.sleep(math.min(timeoutMs, 20L)) // caught up: a backlog takes no new records
      None
    } else if (dueAt - now > timeoutMs) {
      Thread.sleep(timeoutMs)
      None
    } else {
      if (dueAt > now) Thread.sleep(dueAt - now)
      Some(push(math.max(now, dueAt)))
    }
  }

  private def push(now: Long): SubscriptionSignal = {
    val count = if (position >= shard.records) 0
    else shard.pageLength(position, limits.maxPageRecords, limits.maxEventBytes)
    val records = shard.slice(position, count)
    position += count
    reportedTip = position >= shard.records
    dueAt = now + count.toLong * shard.recordBytes * 1000L / limits.pushBytesPerSecond
    SubscriptionSignal.Event(records, Some(shard.sequenceNumber(position - 1)), lagAt(position, now), Nil)
  }

  override def cancel(): Unit = done = true
}
