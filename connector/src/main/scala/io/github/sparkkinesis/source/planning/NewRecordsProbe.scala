package io.github.sparkkinesis.source.planning

import java.util.concurrent.{Callable, ExecutorService, Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException,
  ExpiredIteratorException,
  IteratorStart,
  KinesisClient,
  KinesisClientException,
  KinesisRecord,
  RecordBatch,
  ThrottledException,
  TimestampInFutureException
}
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}

/**
 * The driver's cheap check for new records, so that no empty micro-batch is started: GetRecords calls with limit 1 per
 * shard asked about. Where Kinesis answers empty pages while MillisBehindLatest says records lie ahead (sparse shards,
 * and positions near the trim horizon, where AWS serves such pages for many minutes), a check walks on through at most
 * [[NewRecordsProbe.WalkPages]] pages and keeps the iterator it ended on, so the next check of the same position goes
 * on from there instead of walking again; such a shard is `walking`: answered, but not decided either way. A walk that
 * reaches a record moves the shard's position to AT_SEQUENCE_NUMBER of that record: exactly the same records follow
 * (the pages in between were empty), and a task, or a later run, starts right at it instead of walking the same empty
 * pages again (GetRecords iterators are opaque and expire after 5 minutes, so a walk's progress is kept only as the
 * driver's own iterator until then). A closed shard found read to its end is marked finished, which makes its children
 * readable and checked in the same call.
 *
 * A check that finds records keeps the iterator of its last GetRecords call, which starts exactly at the shard's
 * (possibly advanced) position, for the batch's task of that shard ([[iteratorAt]]): the task then makes no
 * GetShardIterator call of its own.
 *
 * A check that fails for a passing reason (throttling, an expired iterator, a connection reset, a shard that just
 * expired) is `unanswered`: the driver looks again later, and an AvailableNow run does not count the shard as having
 * reached its target. A shard whose checks keep failing for `failureTimeoutMs` fails the query with the last error;
 * refused credentials fail it at once.
 */
private[source] final class NewRecordsProbe(
    client: KinesisClient,
    stream: String,
    failureTimeoutMs: Long,
    threads: Int,
    clock: () => Long = () => System.currentTimeMillis())
    extends AutoCloseable {
  import NewRecordsProbe._

  private val log = LoggerFactory.getLogger(getClass)

  /** Per shard: the position checked, the iterator that goes on from where the last check ended, pages walked. */
  private val iterators = mutable.Map.empty[String, (ShardPosition, String, Long)]

  /** Per shard whose last check found records: the position it found them at, and an iterator that starts there. */
  private val foundAt = mutable.Map.empty[String, (ShardPosition, String)]

  /** Per shard a check found records in: the data bytes of the first record found, the last time. */
  private val sampled = mutable.Map.empty[String, Long]
  private val failures = mutable.Map.empty[String, FailureWindow]
  private var pool: Option[ExecutorService] = None
  private val calls = new AtomicLong()

  /** GetRecords calls this probe has made. */
  def getRecordsCalls: Long = calls.get()

  /**
   * Checks the readable shards that `shouldCheck` selects, then the children that shards found finished make readable.
   * `arrivedBefore` bounds a shard's news to records that arrived before that instant (an AvailableNow run's target): a
   * first record at or after it means the shard is at its target. With `untilNews`, shards are checked a wave of
   * `threads` at a time, in order, until a wave finds records: the shards left are `unasked`.
   */
  def check(
      shards: Map[String, ShardState],
      shouldCheck: String => Boolean,
      arrivedBefore: String => Option[Long],
      untilNews: Boolean = false): Checked = {
    forgetAllBut(shards.keySet)
    var current = shards
    var seen = Set.empty[String]
    var found = Checked(shards, Set.empty, Set.empty, Set.empty)
    var toCheck = ShardState.readable(current).filter(shouldCheck)
    while (toCheck.nonEmpty) {
      val states = current
      val (wave, rest) = if (untilNews) toCheck.splitAt(threads) else (toCheck, Nil)
      val checks = wave.zip(inParallel(wave.map(id => () => checkShard(id, states(id).position, arrivedBefore(id)))))
      val outcomes = checks.map { case (id, (outcome, _)) => id -> outcome }
      seen ++= wave
      val finished = outcomes.collect { case (id, Finished) => id }
      current ++= finished.map(id => id -> current(id).copy(position = ShardPosition.ShardEnd))
      current ++= checks.collect { case (id, (_, Some(first))) => id -> current(id).copy(position = first) }
      found = Checked(
        current,
        found.news ++ outcomes.collect { case (id, HasRecords) => id },
        found.idle ++ outcomes.collect { case (id, Idle) => id },
        found.unanswered ++ outcomes.collect { case (id, Unanswered) => id },
        found.walking ++ outcomes.collect { case (id, Walking) => id })
      val waiting = rest.toSet
      val children =
        if (finished.isEmpty) Nil else ShardState.readable(current).filterNot(id => seen(id) || waiting(id))
      toCheck = rest ++ children
      if (untilNews && found.news.nonEmpty) {
        found = found.copy(unasked = toCheck.toSet)
        toCheck = Nil
      }
    }
    found
  }

  /**
   * An iterator that starts exactly at `position` of `shardId`, from the last check of the shard, which found records
   * there; None if that check found none, or checked another position. GetShardIterator's API reference: an iterator
   * names a position in the shard and expires 5 minutes after Kinesis returns it (GetRecords then answers
   * ExpiredIteratorException, and a reader gets a new one at the same position). It names no single use (a throttled
   * GetRecords is retried with the same iterator): the check's call with limit 1 and the task's read the same records.
   * Not for a position inside a KPL aggregate (AFTER_SUB_SEQUENCE_NUMBER), which a task reads from that aggregate's
   * record on.
   */
  def iteratorAt(shardId: String, position: ShardPosition): Option[String] = synchronized {
    foundAt.get(shardId).collect { case (`position`, iterator) => iterator }
  }

  /** The data bytes of the first record the last check of `shardId` that found records found, if any did. */
  def sampledRecordBytes(shardId: String): Option[Long] = synchronized(sampled.get(shardId))

  /** The largest of the records [[sampledRecordBytes]] holds for the stream's shards, if any. */
  def largestSampledRecordBytes: Option[Long] = synchronized(if (sampled.isEmpty) None else Some(sampled.values.max))

  /**
   * The sequence number of the oldest record Kinesis retains in each of `shardIds` (walking empty pages as a check
   * does); shards that have none, or do not answer, are left out.
   */
  def oldestRetained(shardIds: Seq[String]): Map[String, String] =
    shardIds.zip(inParallel(shardIds.map(id => () => oldestOf(id)))).collect { case (id, Some(seq)) => id -> seq }.toMap

  private def oldestOf(shardId: String): Option[String] =
    try {
      var page = getRecords(client.shardIterator(stream, shardId, IteratorStart.TrimHorizon))
      var pages = 1
      while (page.records.isEmpty && page.millisBehindLatest > 0 && page.nextIterator.isDefined &&
        pages < OldestWalkPages) {
        page = getRecords(page.nextIterator.get)
        pages += 1
      }
      page.records.headOption.map(_.sequenceNumber)
    } catch {
      case _: KinesisClientException => None
    }

  /** The outcome, and where a walk across empty pages that reached a record moves the shard: to that record. */
  private def checkShard(
      shardId: String,
      position: ShardPosition,
      arrivedBefore: Option[Long]): (Outcome, Option[ShardPosition]) =
    position match {
      // The driver chose this instant with its own clock: nothing can have arrived at or after it yet.
      case ShardPosition.AtTimestamp(ms) if ms > clock() => (Idle, None)
      case _ =>
        try {
          val cached = synchronized(iterators.get(shardId)).collect { case (`position`, it, walked) => (it, walked) }
          var iterator = cached.fold(client.shardIterator(stream, shardId, position.iteratorStart.get))(_._1)
          var walked = cached.fold(0L)(_._2)
          var outcome: Option[Outcome] = None
          var first: Option[KinesisRecord] = None
          var lag = 0L
          var pages = 0
          while (outcome.isEmpty && pages < WalkPages) {
            val page = getRecords(iterator)
            pages += 1
            lag = page.millisBehindLatest
            first = page.records.headOption
            outcome = page.records.headOption match {
              case Some(r) if arrivedBefore.exists(r.approximateArrivalTimestampMillis >= _) => Some(Idle)
              case Some(_) => Some(HasRecords)
              case None if page.nextIterator.isEmpty => Some(Finished)
              case None =>
                iterator = page.nextIterator.get // an empty page: the next check, or page, goes on from here
                if (page.millisBehindLatest > 0) {
                  walked += 1
                  None
                } else Some(Idle)
            }
          }
          val advance = first.filter(_ => walked > 0).map(r => ShardPosition.AtSequenceNumber(r.sequenceNumber))
          advance.foreach { to =>
            log.info(s"Shard $shardId of stream $stream: a check walked $walked empty page(s) from $position to the " +
              s"first record after it; the shard goes on from $to (the same records, without walking again).")
          }
          if (outcome.isEmpty && walked == pages && cached.isEmpty) {
            log.info(s"Shard $shardId of stream $stream: Kinesis answers empty pages from $position while " +
              s"MillisBehindLatest ($lag ms) says records lie ahead; the driver walks on, a few pages per look, and " +
              "keeps its place (MillisBehindLatest near the stream's retention period: the position is at the trim " +
              "horizon, where AWS serves such pages for many minutes).")
          }
          synchronized {
            failures.remove(shardId)
            if (outcome.forall(_ == Idle) && advance.isEmpty) iterators(shardId) = (position, iterator, walked)
            else iterators.remove(shardId)
            // The page that had records was read from `iterator`: it starts at the shard's position, past any walk.
            val from = advance.getOrElse(position)
            if (outcome.contains(HasRecords) && handsOver(from)) foundAt(shardId) = (from, iterator)
            else foundAt.remove(shardId)
            first.foreach(r => sampled(shardId) = r.data.length.toLong)
          }
          (outcome.getOrElse(Walking), advance) // still walking empty pages: neither news nor known to be idle
        } catch {
          case e: AccessException => throw e
          case _: TimestampInFutureException =>
            synchronized(foundAt.remove(shardId))
            (Idle, None) // Kinesis' clock has not reached the position yet: nothing can be there
          case _: ThrottledException | _: ExpiredIteratorException =>
            forgetIterators(shardId)
            (Unanswered, None)
          case e: KinesisClientException =>
            synchronized {
              forgetIterators(shardId)
              failures.getOrElseUpdate(
                shardId,
                new FailureWindow(s"Checking shard $shardId of stream $stream", failureTimeoutMs, clock)).failed(e)
            }
            log.warn(s"Checking shard $shardId of stream $stream for new records failed; trying again later: " +
              e.getMessage)
            (Unanswered, None)
        }
    }

  private def getRecords(iterator: String): RecordBatch = {
    calls.incrementAndGet()
    client.getRecords(stream, iterator, 1)
  }

  /** Drops the iterators kept for `shardId`: a failed check leaves none to go on from or to hand over. */
  private def forgetIterators(shardId: String): Unit = synchronized {
    iterators.remove(shardId)
    foundAt.remove(shardId)
  }

  /** Drops what is kept about shards no longer tracked, so nothing grows with resharding. */
  private def forgetAllBut(tracked: collection.Set[String]): Unit = synchronized {
    iterators --= iterators.keys.filterNot(tracked).toList
    foundAt --= foundAt.keys.filterNot(tracked).toList
    sampled --= sampled.keys.filterNot(tracked).toList
    failures --= failures.keys.filterNot(tracked).toList
  }

  private def inParallel[T](tasks: Seq[() => T]): Seq[T] =
    if (tasks.size <= 1) tasks.map(_.apply())
    else {
      val executor = synchronized {
        pool.getOrElse {
          val created = Executors.newFixedThreadPool(
            threads,
            new ThreadFactory {
              override def newThread(r: Runnable): Thread = {
                val t = new Thread(r, s"kinesis-probe-$stream")
                t.setDaemon(true)
                t
              }
            })
          pool = Some(created)
          created
        }
      }
      val futures = tasks.map(task => executor.submit(new Callable[T] { override def call(): T = task() }))
      futures.map { f =>
        try f.get()
        catch { case e: java.util.concurrent.ExecutionException => throw e.getCause }
      }
    }

  override def close(): Unit = synchronized(pool.foreach(_.shutdownNow()))
}

private[source] object NewRecordsProbe {

  /** Most GetRecords calls one check spends walking empty pages; the next check goes on where it stopped. */
  val WalkPages = 3

  /**
   * Most GetRecords calls the search for a shard's oldest retained record spends walking empty pages from the trim
   * horizon (once per run, and when a batch planned before a restart is read again); a shard whose walk does not reach
   * a record is left out of that check.
   */
  val OldestWalkPages = 100

  /** Whether a task starting at `position` may read from the iterator a check found records with ([[iteratorAt]]). */
  private def handsOver(position: ShardPosition): Boolean = position match {
    case _: ShardPosition.AfterSubSequenceNumber | ShardPosition.ShardEnd => false
    case _ => true
  }

  sealed trait Outcome
  case object HasRecords extends Outcome
  case object Idle extends Outcome
  case object Finished extends Outcome
  case object Unanswered extends Outcome

  /** Empty pages with records ahead, walked on without reaching them yet: progress, but no answer. */
  case object Walking extends Outcome

  /**
   * What a check found: the shard states with shards found read to their end marked finished, the shards with records
   * to read, the shards checked that had none (or are at their target), those it could not tell (failed), those still
   * walking empty pages towards their next record (answered: the walk went on), and those a check `untilNews` left
   * unasked once it found records.
   */
  final case class Checked(
      states: Map[String, ShardState],
      news: Set[String],
      idle: Set[String],
      unanswered: Set[String],
      walking: Set[String] = Set.empty,
      unasked: Set[String] = Set.empty)
}
