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
import java.util.concurrent.atomic.AtomicInteger

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.compat.JavaCollections._
import io.github.sparkkinesis.client.KinesisClient
import io.github.sparkkinesis.metadata.ShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.source.reading.{
  FetchBudget,
  ParallelRows,
  ReaderSettings,
  RecordSize,
  ShardPages,
  TaskShard
}

/**
 * The rows of one real-time task, as they arrive: every shard of `partition` is read on a thread of its own
 * ([[ShardFeed]]) into one queue, from which [[next]] takes the next row, waiting at most its timeout. The task's
 * position in a shard moves past a Kinesis record once the last of its rows has been handed over, and into a KPL
 * aggregate while its rows are (after the last sub-record handed over), so [[offset]] is exactly what was handed over,
 * whatever the feeds have read ahead. The queue holds at most [[RealTimeRows.QueueBytes]] of record data and
 * [[RealTimeRows.QueueRows]] rows (or one larger record), so a fast shard cannot fill the executor's memory; the pages
 * fetched and not yet queued (one per shard, waiting while the queue is full) hold at most [[FetchBudget.TaskBytes]]
 * and [[FetchBudget.TaskRows]] together, each shard's page sized to an equal share of half of them and what the other
 * half lends it while free ([[FetchBudget]]), so a task reading hundreds of backlogged shards holds no more than one
 * reading a few.
 *
 * A shard read to its end is followed into its children ([[ChildShards]]): a split's children by the task that read the
 * parent, a merge's child by the task that read its first parent, once the other parent is read to its end too. A
 * child's rows are handed over only after every row of its parents.
 *
 * When the task ends, each shard's reader is parked in `warm` ([[WarmShards]]) with the records it fetched but did not
 * hand over, keyed by the position after the last row handed over, and the next batch's task of the shard that starts
 * there takes it over: no GetShardIterator or SubscribeToShard at a batch boundary, and a walk across empty pages goes
 * on. A shard whose last record was handed over only in part parks nothing.
 *
 * `attempt` is Spark's attempt number of the task: a retry trusts no other task's record that a parent has ended.
 */
private[source] final class RealTimeRows(
    partition: RealTimePartition,
    settings: ReaderSettings,
    store: ShardEndStore,
    client: KinesisClient,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep,
    warm: WarmShards = WarmShards.shared,
    attempt: Int = 0) {
  import partition.{batch, task}

  private val log = LoggerFactory.getLogger(getClass)
  private val queue = new LinkedBlockingQueue[FeedItem]()
  private val queued = new ParallelRows.QueuedBytes(RealTimeRows.QueueBytes, RealTimeRows.QueueRows)
  private val feeds = new ConcurrentHashMap[ShardRef, ShardFeed]()

  /**
   * Feeds whose thread has not stopped. They share the fetch budget, counted as at least the task's shards from the
   * start, so the first feeds to start do not size their pages for the shards started after them.
   */
  private val reading = new AtomicInteger()
  private val budget = FetchBudget.ofTask(() => math.max(partition.shards.size, reading.get))

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
  private val children = new ChildShards(partition, store, client, sleep, start, () => closed, pool.execute, attempt)

  private var current: FeedItem.Record = _
  private var index = -1

  /** Shards whose reader this task took over from the last batch's task, for the log. */
  private val takenOver = ConcurrentHashMap.newKeySet[ShardRef]()
  private val startedAtMs = clock()
  private var firstRowAtMs = -1L

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
    if (firstRowAtMs < 0) firstRowAtMs = clock()
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

  /**
   * Stops every feed and waits (briefly) for their threads, then parks each shard's reader for the next batch, or
   * closes it (a subscription still open is cancelled).
   */
  def close(): Unit = {
    closed = true
    pool.shutdownNow()
    val interrupted = Thread.interrupted()
    val stopped =
      try {
        val done = pool.awaitTermination(RealTimeRows.CloseWaitMs, TimeUnit.MILLISECONDS)
        if (!done) {
          log.warn(s"Real-time batch $batch task $task: shard readers still busy ${RealTimeRows.CloseWaitMs} ms " +
            "after the task ended; each stops when its Kinesis call returns.")
        }
        done
      } catch {
        case _: InterruptedException => false
      } finally if (interrupted) Thread.currentThread().interrupt()
    val parked = park(stopped)
    val firstRow = if (firstRowAtMs < 0) "no row" else s"its first row after ${firstRowAtMs - startedAtMs} ms"
    log.info(s"Real-time batch $batch task $task ended after ${clock() - startedAtMs} ms ($firstRow): it took over " +
      s"${takenOver.size} of ${feeds.size} shard readers from the last batch and parked $parked for the next.")
  }

  /**
   * Parks each shard's reader for the next batch ([[WarmShards]]) if its thread has stopped (`stopped`) with every
   * record it fetched accounted for, and the shard's last record was not handed over in part; closes the others.
   * Returns how many it parked.
   */
  private def park(stopped: Boolean): Int = {
    val left = new java.util.ArrayList[FeedItem]()
    queue.drainTo(left)
    val queuedFor = left.asScala.collect { case r: FeedItem.Record => r }.toVector.groupBy(_.shard)
    val cutShard = Option(current).filter(_ => index < current.rows.length - 1).map(_.shard)
    feeds.values().asScala.toSeq.count { f =>
      val reader = if (stopped && !cutShard.contains(f.ref)) f.unsent else None
      reader match {
        case Some((pages, unsent, walked, size)) =>
          val position = Option(handed.get(f.ref)).getOrElse(f.shard.start)
          val pending = queuedFor.getOrElse(f.ref, Vector.empty) ++ unsent // the queue's were emitted first
          warm.park(
            WarmKey(settings, client, f.ref.stream, f.ref.shardId),
            ParkedReader(pages, pending, position, walked, size))
          true
        case None =>
          try f.close()
          catch { case NonFatal(e) => log.warn(s"Closing the reader of shard ${f.ref} failed: ${e.getMessage}") }
          false
      }
    }
  }

  private def start(shard: TaskShard): Unit = if (!closed) {
    val taken = warm.take(WarmKey(settings, client, shard.stream, shard.shardId), shard.start)
    val pages = taken.fold(ShardPages.open(client, shard, settings, clock, sleep))(_.pages)
    val feed = new ShardFeed(
      shard,
      pages,
      settings.recordsPerFetch,
      settings.dropMisroutedRecords,
      enqueue,
      budget,
      pending = taken.fold(Vector.empty[FeedItem.Record])(_.pending),
      walkedBefore = taken.fold(0L)(_.walked),
      size = taken.fold(RecordSize.Unknown)(_.recordSize))
    if (taken.isDefined) takenOver.add(feed.ref)
    feeds.put(feed.ref, feed) // before it runs: its items name it
    reading.incrementAndGet() // before it runs: its first page is sized with every shard started so far
    try pool.execute(() =>
        try feed.run()
        finally reading.decrementAndGet())
    catch {
      case _: RejectedExecutionException => // the task ended meanwhile
        reading.decrementAndGet()
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
