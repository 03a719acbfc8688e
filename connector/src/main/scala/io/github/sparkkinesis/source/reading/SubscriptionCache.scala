package io.github.sparkkinesis.source.reading

import java.util.concurrent.{ConcurrentHashMap, Executors, ThreadFactory, TimeUnit}

import io.github.sparkkinesis.client.{KinesisRecord, ShardSubscription}
import io.github.sparkkinesis.offsets.ShardPosition

/** One consumer's subscription to one shard: SubscribeToShard allows one open at a time. */
private[sparkkinesis] final case class SubscriptionKey(consumerArn: String, shardId: String)

/**
 * A subscription a finished task left open for the next task of its shard: where the task stopped (`position`), the
 * records received past it, the last record received, the last event's lag, when it last sent a signal (by the readers'
 * clock), so that silence is judged across tasks, and the last event's continuation sequence number.
 */
private[sparkkinesis] final case class ParkedSubscription(
    subscription: ShardSubscription,
    position: ShardPosition,
    buffered: Vector[KinesisRecord],
    lastReceived: Option[String],
    millisBehind: Option[Long],
    finalEventSeen: Boolean,
    lastSignalAtMs: Long,
    continuedTo: Option[String],
    parkedAtNanos: Long = System.nanoTime())

/**
 * The subscriptions of this executor that are open between micro-batches. A task that ends hands its subscription over;
 * the next task of that shard takes it only if it starts exactly where the last one stopped, so no record is skipped or
 * read twice; any other start cancels it. Subscriptions unclaimed for [[SubscriptionCache.IdleMs]] are cancelled. It
 * also remembers when each shard was last subscribed, since Kinesis allows one SubscribeToShard per second per shard
 * and consumer.
 */
private[sparkkinesis] final class SubscriptionCache {
  private val parked = new ConcurrentHashMap[SubscriptionKey, ParkedSubscription]()
  private val subscribedAt = new ConcurrentHashMap[SubscriptionKey, java.lang.Long]()

  /** The subscription parked for `key` if it stopped at `start`; any other is cancelled. */
  def take(key: SubscriptionKey, start: ShardPosition): Option[ParkedSubscription] =
    Option(parked.remove(key)).flatMap { p =>
      if (p.position == start) Some(p)
      else {
        p.subscription.cancel()
        None
      }
    }

  /** Parks `subscription` for the next task of its shard, cancelling one parked before. */
  def park(key: SubscriptionKey, subscription: ParkedSubscription): Unit = {
    SubscriptionCache.startEvictor()
    Option(parked.put(key, subscription)).filter(_.subscription ne subscription.subscription).foreach(
      _.subscription.cancel())
  }

  /** When `key` was last subscribed (by the caller's clock), if this executor did. */
  def lastSubscribedAt(key: SubscriptionKey): Option[Long] = Option(subscribedAt.get(key)).map(_.longValue)

  def subscribed(key: SubscriptionKey, atMs: Long): Unit = subscribedAt.put(key, atMs)

  /** Where the subscription parked for `key` stands, if one is. */
  def parkedAt(key: SubscriptionKey): Option[ShardPosition] = Option(parked.get(key)).map(_.position)

  /** How many subscriptions are parked. */
  def size: Int = parked.size

  /** Cancels every parked subscription older than `idleMs` (all of them with 0). */
  def evict(idleMs: Long): Unit = {
    val now = System.nanoTime()
    parked.forEach { (key, p) =>
      if (now - p.parkedAtNanos >= TimeUnit.MILLISECONDS.toNanos(idleMs) && parked.remove(key, p))
        p.subscription.cancel()
    }
  }
}

private[sparkkinesis] object SubscriptionCache {

  /**
   * A parked subscription unclaimed this long is cancelled: its shard went quiet or moved to another executor (whose
   * subscribe would otherwise be refused while this one is open).
   */
  val IdleMs = 30000L

  /** The executor's cache, shared by every task and query of this JVM. */
  lazy val shared: SubscriptionCache = new SubscriptionCache

  private lazy val evictor = {
    val pool = Executors.newSingleThreadScheduledExecutor(new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, "spark-kinesis-subscription-evictor")
        t.setDaemon(true)
        t
      }
    })
    pool.scheduleWithFixedDelay(
      new Runnable { override def run(): Unit = shared.evict(IdleMs) },
      IdleMs / 3,
      IdleMs / 3,
      TimeUnit.MILLISECONDS)
    pool
  }

  private def startEvictor(): Unit = evictor
}
