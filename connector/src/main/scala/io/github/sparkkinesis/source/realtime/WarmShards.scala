package io.github.sparkkinesis.source.realtime

import java.util.concurrent.{ConcurrentHashMap, Executors, ThreadFactory, TimeUnit}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.KinesisClient
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.reading.{ReaderSettings, RecordSize, ShardPages}

/**
 * A shard as one query's readers read it: the same settings (client, fan-out consumer, pacing), stream and shard,
 * through the same client (a reader's iterator or subscription belongs to the client that made it; an executor's client
 * is shared while in use and closed once idle, so another instance means another connection).
 */
private[source] final case class WarmKey(
    settings: ReaderSettings,
    client: KinesisClient,
    stream: String,
    shardId: String)

/**
 * A shard's reader that a real-time task left for the next batch's task of the shard: its pages (a polling iterator or
 * an open subscription), the records it fetched but did not hand over, in order, and `position`, just after the last
 * row it handed over, where the next task must start to take it over. `walked` counts the empty pages with records
 * ahead that it has walked without reaching one; `recordSize`, the shard's average record, sizes the next task's first
 * page as the last one's.
 */
private[source] final case class ParkedReader(
    pages: ShardPages,
    pending: Vector[FeedItem.Record],
    position: ShardPosition,
    walked: Long,
    recordSize: RecordSize)

/**
 * The shard readers of this executor kept warm between real-time batches (and polling readers between micro-batches,
 * [[io.github.sparkkinesis.source.reading.ShardReader]]), so a boundary costs no GetShardIterator or SubscribeToShard,
 * a walk across empty pages goes on where it was, and a polling reader keeps waiting out its shard's read limit. A task
 * takes a parked reader only if it starts exactly where the reader's last task handed its last row over, so the same
 * records follow as a fresh reader would give; any other start, or a reader parked longer than `maxIdleMs` (a polling
 * iterator expires after 5 minutes; an open subscription keeps another executor from subscribing), closes it.
 */
private[source] final class WarmShards(
    maxIdleMs: Long = WarmShards.IdleMs,
    clock: () => Long = () =>
      System.currentTimeMillis()) {
  private val log = LoggerFactory.getLogger(getClass)

  /** The parked readers, each with when it was parked. */
  private val parked = new ConcurrentHashMap[WarmKey, (ParkedReader, Long)]()

  /** The reader parked for `key` if it stopped at `start` and is fresh enough; any other parked for `key` is closed. */
  def take(key: WarmKey, start: ShardPosition): Option[ParkedReader] =
    Option(parked.remove(key)).flatMap { case (p, at) =>
      if (p.position == start && clock() - at < maxIdleMs) Some(p)
      else {
        close(key, p)
        None
      }
    }

  /** Parks `reader` for the next task of its shard, closing one parked before. */
  def park(key: WarmKey, reader: ParkedReader): Unit = {
    WarmShards.startEvictor()
    Option(parked.put(key, (reader, clock()))).map(_._1).filter(_.pages ne reader.pages).foreach(close(key, _))
  }

  /** How many readers are parked. */
  def size: Int = parked.size

  /** Closes every reader parked `maxIdleMs` or longer ago. */
  def evict(): Unit = parked.forEach { (key, entry) =>
    if (clock() - entry._2 >= maxIdleMs && parked.remove(key, entry)) close(key, entry._1)
  }

  private def close(key: WarmKey, p: ParkedReader): Unit =
    try p.pages.close(handedOver = false)
    catch {
      case NonFatal(e) => log.warn(s"Closing the parked reader of shard ${key.stream}/${key.shardId} failed: $e")
    }
}

private[source] object WarmShards {

  /**
   * A reader unclaimed this long is closed: its shard moved to another executor or the query stopped. Far below the 5
   * minutes a shard iterator lives, as long as [[io.github.sparkkinesis.source.reading.SubscriptionCache.IdleMs]].
   */
  val IdleMs = 30000L

  /** The executor's parked readers, shared by every task of this JVM. */
  private[source] lazy val shared: WarmShards = new WarmShards

  private lazy val evictor = {
    val pool = Executors.newSingleThreadScheduledExecutor(new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, "spark-kinesis-warm-shard-evictor")
        t.setDaemon(true)
        t
      }
    })
    pool.scheduleWithFixedDelay(() => shared.evict(), IdleMs / 3, IdleMs / 3, TimeUnit.MILLISECONDS)
    pool
  }

  private def startEvictor(): Unit = evictor
}
