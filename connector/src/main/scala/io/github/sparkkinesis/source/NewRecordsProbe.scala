package io.github.sparkkinesis.source

import java.util.concurrent.{Callable, ExecutorService, Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException, ExpiredIteratorException, IteratorStart, KinesisClient, KinesisClientException, RecordBatch,
  ThrottledException, TimestampInFutureException
}
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}

/**
 * The driver's cheap check for new records, so that no empty micro-batch is started: GetRecords calls with limit 1
 * per shard asked about. Where Kinesis answers empty pages while MillisBehindLatest says records lie ahead, a check
 * walks on through at most [[NewRecordsProbe.WalkPages]] pages and keeps the iterator it ended on, so the next check
 * of the same position goes on from there instead of walking again; a walk that has not reached a record or the tip
 * yet says nothing either way. A closed shard found read to its end is marked finished, which makes its children
 * readable and checked in the same call.
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
  /** Per shard: the position checked and the iterator that goes on from where the last check ended. */
  private val iterators = mutable.Map.empty[String, (ShardPosition, String)]
  private val failures = mutable.Map.empty[String, FailureWindow]
  private var pool: Option[ExecutorService] = None
  private val calls = new AtomicLong()

  /** GetRecords calls this probe has made. */
  def getRecordsCalls: Long = calls.get()

  /**
   * Checks the readable shards that `shouldCheck` selects, then the children that shards found finished make
   * readable. `arrivedBefore` bounds a shard's news to records that arrived before that instant (an AvailableNow
   * run's target): a first record at or after it means the shard is at its target.
   */
  def check(
      shards: Map[String, ShardState],
      shouldCheck: String => Boolean,
      arrivedBefore: String => Option[Long]): Checked = {
    forgetAllBut(shards.keySet)
    var current = shards
    var seen = Set.empty[String]
    var found = Checked(shards, Set.empty, Set.empty, Set.empty)
    var toCheck = ShardState.readable(current).filter(shouldCheck)
    while (toCheck.nonEmpty) {
      val states = current
      val outcomes =
        toCheck.zip(inParallel(toCheck.map(id => () => checkShard(id, states(id).position, arrivedBefore(id)))))
      seen ++= toCheck
      val finished = outcomes.collect { case (id, Finished) => id }
      current ++= finished.map(id => id -> current(id).copy(position = ShardPosition.ShardEnd))
      found = Checked(current,
        found.news ++ outcomes.collect { case (id, HasRecords) => id },
        found.quiet ++ outcomes.collect { case (id, Idle) => id },
        found.unanswered ++ outcomes.collect { case (id, Unanswered) => id })
      toCheck = if (finished.isEmpty) Nil else ShardState.readable(current).filterNot(seen)
    }
    found
  }

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
      while (page.records.isEmpty && page.millisBehindLatest > 0 && page.nextIterator.isDefined && pages < WalkPages) {
        page = getRecords(page.nextIterator.get)
        pages += 1
      }
      page.records.headOption.map(_.sequenceNumber)
    } catch {
      case _: KinesisClientException => None
    }

  private def checkShard(shardId: String, position: ShardPosition, arrivedBefore: Option[Long]): Outcome =
    position match {
      // The driver chose this instant with its own clock: nothing can have arrived at or after it yet.
      case ShardPosition.AtTimestamp(ms) if ms > clock() => Idle
      case _ =>
        try {
          val cached = synchronized(iterators.get(shardId)).collect { case (`position`, it) => it }
          var iterator = cached.getOrElse(client.shardIterator(stream, shardId, position.iteratorStart.get))
          var outcome: Option[Outcome] = None
          var pages = 0
          while (outcome.isEmpty && pages < WalkPages) {
            val page = getRecords(iterator)
            pages += 1
            outcome = page.records.headOption match {
              case Some(first) if arrivedBefore.exists(first.approximateArrivalTimestampMillis >= _) => Some(Idle)
              case Some(_)                                   => Some(HasRecords)
              case None if page.nextIterator.isEmpty         => Some(Finished)
              case None =>
                iterator = page.nextIterator.get // an empty page: the next check, or page, goes on from here
                if (page.millisBehindLatest > 0) None else Some(Idle)
            }
          }
          synchronized {
            failures.remove(shardId)
            if (outcome.forall(_ == Idle)) iterators(shardId) = position -> iterator
            else iterators.remove(shardId)
          }
          outcome.getOrElse(Unanswered) // still walking empty pages: neither news nor known to be quiet
        } catch {
          case e: AccessException => throw e
          case _: TimestampInFutureException =>
            Idle // Kinesis' clock has not reached the position yet: nothing can be there
          case _: ThrottledException | _: ExpiredIteratorException =>
            synchronized(iterators.remove(shardId))
            Unanswered
          case e: KinesisClientException =>
            synchronized {
              iterators.remove(shardId)
              failures.getOrElseUpdate(shardId,
                new FailureWindow(s"Checking shard $shardId of stream $stream", failureTimeoutMs, clock)).failed(e)
            }
            log.warn(s"Checking shard $shardId of stream $stream for new records failed; trying again later: " +
              e.getMessage)
            Unanswered
        }
    }

  private def getRecords(iterator: String): RecordBatch = {
    calls.incrementAndGet()
    client.getRecords(stream, iterator, 1)
  }

  /** Drops what is kept about shards no longer tracked, so nothing grows with resharding. */
  private def forgetAllBut(tracked: collection.Set[String]): Unit = synchronized {
    iterators --= iterators.keys.filterNot(tracked).toList
    failures --= failures.keys.filterNot(tracked).toList
  }

  private def inParallel[T](tasks: Seq[() => T]): Seq[T] =
    if (tasks.size <= 1) tasks.map(_.apply())
    else {
      val executor = synchronized {
        pool.getOrElse {
          val created = Executors.newFixedThreadPool(threads, new ThreadFactory {
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

  sealed trait Outcome
  case object HasRecords extends Outcome
  case object Idle extends Outcome
  case object Finished extends Outcome
  case object Unanswered extends Outcome

  /**
   * What a check found: the shard states with shards found read to their end marked finished, the shards with
   * records to read, the shards checked that had none (or are at their target), and those it could not tell.
   */
  final case class Checked(
      states: Map[String, ShardState], news: Set[String], quiet: Set[String], unanswered: Set[String])
}
