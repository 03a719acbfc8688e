package io.github.sparkkinesis.source.realtime

import java.util.concurrent.{
  ConcurrentHashMap,
  ExecutorService,
  Executors,
  LinkedBlockingQueue,
  RejectedExecutionException,
  ThreadFactory,
  TimeUnit
}

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.KinesisClient
import io.github.sparkkinesis.metadata.ShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.reading.{ParallelRows, ReaderSettings, ShardPages, TaskShard}

/**
 * The rows of one real-time task, as they arrive: every shard of `partition` is read on a thread of its own
 * ([[ShardFeed]]) into one queue, from which [[next]] takes the next row, waiting at most its timeout. The task's
 * position in a shard moves past a Kinesis record once the last of its rows has been handed over, and into a KPL
 * aggregate while its rows are (after the last sub-record handed over), so [[offset]] is exactly what was handed over,
 * whatever the feeds have read ahead. The queue holds at most [[RealTimeRows.QueueBytes]] of record data and
 * [[RealTimeRows.QueueRows]] rows (or one larger record), so a fast shard cannot fill the executor's memory.
 *
 * A shard read to its end is followed into its children ([[ChildShards]]): a split's children by the task that read the
 * parent, a merge's child by the task that read its first parent, once the other parent is read to its end too. A
 * child's rows are handed over only after every row of its parents.
 */
private[source] final class RealTimeRows(
    partition: RealTimePartition,
    settings: ReaderSettings,
    store: ShardEndStore,
    client: KinesisClient,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep) {
  import partition.{batch, task}

  private val log = LoggerFactory.getLogger(getClass)
  private val queue = new LinkedBlockingQueue[FeedItem]()
  private val queued = new ParallelRows.QueuedBytes(RealTimeRows.QueueBytes, RealTimeRows.QueueRows)
  private val feeds = new ConcurrentHashMap[ShardRef, ShardFeed]()

  /** Per shard read, the position after the last row handed over (written by the task's thread only). */
  private val handed = new ConcurrentHashMap[ShardRef, ShardPosition]()
  @volatile private var closed = false
  private val pool: ExecutorService = Executors.newCachedThreadPool(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val thread = new Thread(r, s"kinesis-realtime batch $batch task $task")
      thread.setDaemon(true)
      thread
    }
  })
  private val children = new ChildShards(partition, store, client, sleep, start, () => closed, pool.execute)

  private var current: FeedItem.Record = _
  private var index = -1

  partition.shards.foreach(start)

  /**
   * Moves to the next row, waiting at most `timeoutMs` for one; false when none came in that time. Fails with the error
   * of a shard's feed that failed.
   */
  def next(timeoutMs: Long): Boolean = next(clock(), timeoutMs)

  /** Moves to the next row, waiting until `timeoutMs` after `startTimeMs` (by [[clock]]) at most. */
  def next(startTimeMs: Long, timeoutMs: Long): Boolean = {
    val deadline = startTimeMs + math.max(0L, timeoutMs)
    while (current == null || index + 1 >= current.rows.length) {
      current = null
      val item = queue.poll(math.max(0L, deadline - clock()), TimeUnit.MILLISECONDS)
      item match {
        case null => return false
        case r: FeedItem.Record =>
          queued.giveBack(r.bytes, RealTimeRows.rowsOf(r))
          if (r.rows.isEmpty) handed.put(r.shard, r.after)
          else {
            current = r
            index = -1
          }
        case FeedItem.Ended(shard, named) =>
          handed.put(shard, ShardPosition.ShardEnd)
          children.parentEnded(shard, feeds.get(shard).shard.start, named)
        case FeedItem.Failed(shard, error) =>
          throw new IllegalStateException(
            s"Reading shard $shard in real-time batch $batch failed: ${error.getMessage}",
            error)
      }
    }
    index += 1
    if (index == current.rows.length - 1) handed.put(current.shard, current.after)
    true
  }

  def get(): InternalRow = current.rows(index)

  /** The most rows the queue has held at once, for tests of the bound. */
  private[source] def peakQueuedRows: Long = queued.peakRows

  /** When the current row's Kinesis record arrived in the stream (Kinesis' clock), for Spark's latency metrics. */
  def arrivalMs: Long = current.arrivalMs

  /**
   * Where this task stands in every shard it has read, and the parents of the children it went on into. Asked on the
   * task's thread, as Spark asks along with [[get]]: the record whose rows are being handed over stands inside its
   * aggregate, after the last row handed over, so no row of it is handed over again by the next batch.
   */
  def offset: RealTimeTaskOffset = {
    val inPart = Option(current).map(r => r.shard -> r.positionAfterRow(index))
    val ends = feeds.values().toArray(Array.empty[ShardFeed]).toSeq.map { f =>
      val position = inPart.collect { case (f.ref, p) => p }.orElse(Option(handed.get(f.ref)))
      f.endRecord(batch, position.getOrElse(f.shard.start))
    }
    RealTimeTaskOffset(task, ends.sortBy(e => (e.stream, e.shardId)), children.followed)
  }

  /** Stops every feed and waits (briefly) for their threads; a subscription still open is cancelled. */
  def close(): Unit = {
    closed = true
    pool.shutdownNow()
    val interrupted = Thread.interrupted()
    try {
      if (!pool.awaitTermination(RealTimeRows.CloseWaitMs, TimeUnit.MILLISECONDS)) {
        log.warn(s"Real-time batch $batch task $task: shard readers still busy ${RealTimeRows.CloseWaitMs} ms after " +
          "the task ended; each stops when its Kinesis call returns.")
      }
    } catch {
      case _: InterruptedException => ()
    } finally if (interrupted) Thread.currentThread().interrupt()
    feeds.values().forEach { f =>
      try f.close()
      catch { case NonFatal(e) => log.warn(s"Closing the reader of shard ${f.ref} failed: ${e.getMessage}") }
    }
  }

  private def start(shard: TaskShard): Unit = if (!closed) {
    val pages = ShardPages.open(client, shard, settings, clock, sleep)
    val feed = new ShardFeed(shard, pages, settings.recordsPerFetch, settings.dropMisroutedRecords, enqueue)
    feeds.put(feed.ref, feed) // before it runs: its items name it
    try pool.execute(feed)
    catch {
      case _: RejectedExecutionException => // the task ended meanwhile
        feeds.remove(feed.ref)
        pages.close(handedOver = false)
    }
  }

  private def enqueue(item: FeedItem): Unit = {
    item match {
      case r: FeedItem.Record => queued.take(r.bytes, RealTimeRows.rowsOf(r))
      case _ => ()
    }
    queue.put(item)
  }
}

private[source] object RealTimeRows {

  /** Most record data a task's queue holds at once (one larger record alone). */
  val QueueBytes: Long = 16L << 20

  /**
   * Most rows a task's queue holds at once (one larger aggregate alone): a row costs far more memory than tiny records'
   * data, so the byte bound alone would let millions of them wait.
   */
  val QueueRows: Long = 50000L

  /** What a queued record counts against [[QueueRows]]: its rows, and at least one for the item itself. */
  def rowsOf(record: FeedItem.Record): Long = math.max(1, record.rows.length).toLong

  /** How long closing a task waits for its feeds' threads to stop. */
  val CloseWaitMs = 5000L
}
