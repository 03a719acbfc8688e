package io.github.sparkkinesis.source

import java.util.concurrent.{Callable, ExecutorService, Executors, ThreadFactory}

import scala.collection.mutable

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException, ExpiredIteratorException, KinesisClient, KinesisClientException, ThrottledException,
  TimestampInFutureException
}
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}

/**
 * The driver's cheap check for new records, so that no empty micro-batch is started: one GetRecords call with
 * limit 1 per shard asked about. While a shard stays idle its iterator is kept and reused (an empty answer does not
 * move the position). A closed shard found read to its end is marked finished, which makes its children readable
 * and checked in the same call. An empty page with MillisBehindLatest above 0 counts as news: records lie ahead.
 *
 * A check that fails for a passing reason (throttling, an expired iterator, a connection reset, a shard that just
 * expired) says nothing either way (`unanswered`): the driver counts it as "nothing new for now" and looks again
 * later, while an AvailableNow run does not count the shard as having reached its target; a shard whose checks keep failing for `failureTimeoutMs` fails the query with
 * the last error, and refused credentials fail it at once.
 */
private[source] final class NewRecordsProbe(
    client: KinesisClient,
    stream: String,
    failureTimeoutMs: Long,
    clock: () => Long = () => System.currentTimeMillis())
  extends AutoCloseable {
  import NewRecordsProbe._

  private val log = LoggerFactory.getLogger(getClass)
  private val idleIterators = mutable.Map.empty[String, (ShardPosition, String)]
  private val failingSince = mutable.Map.empty[String, Long]
  private var pool: Option[ExecutorService] = None

  /**
   * Checks the readable shards that `shouldCheck` selects, then the children that shards found finished make
   * readable. `arrivedBefore` bounds a shard's news to records that arrived before that instant (an AvailableNow
   * run's target): a first record at or after it means the shard is at its target.
   */
  def check(
      shards: Map[String, ShardState],
      shouldCheck: String => Boolean,
      arrivedBefore: String => Option[Long]): Checked = {
    var current = shards
    var seen = Set.empty[String]
    var news = Set.empty[String]
    var quiet = Set.empty[String]
    var unanswered = Set.empty[String]
    var toCheck = ShardState.readable(current).filter(shouldCheck)
    while (toCheck.nonEmpty) {
      val outcomes = toCheck.zip(inParallel(toCheck.map(id => () => checkShard(id, current(id).position, arrivedBefore(id)))))
      seen ++= toCheck
      news ++= outcomes.collect { case (id, HasRecords) => id }
      quiet ++= outcomes.collect { case (id, Idle) => id }
      unanswered ++= outcomes.collect { case (id, Unanswered) => id }
      val finished = outcomes.collect { case (id, Finished) => id }
      current ++= finished.map(id => id -> current(id).copy(position = ShardPosition.ShardEnd))
      toCheck = if (finished.isEmpty) Nil else ShardState.readable(current).filterNot(seen)
    }
    Checked(current, news, quiet, unanswered)
  }

  private def checkShard(shardId: String, position: ShardPosition, arrivedBefore: Option[Long]): Outcome =
    position match {
      // The driver chose this instant with its own clock: nothing can have arrived at or after it yet.
      case ShardPosition.AtTimestamp(ms) if ms > clock() => Idle
      case _ =>
        try {
          val cached = synchronized(idleIterators.get(shardId)).collect { case (`position`, it) => it }
          val iterator = cached.getOrElse(client.shardIterator(stream, shardId, position.iteratorStart.get))
          val page = client.getRecords(stream, iterator, 1)
          synchronized(failingSince.remove(shardId))
          val outcome = page.records.headOption match {
            case Some(first) if arrivedBefore.exists(first.approximateArrivalTimestampMillis >= _) => Idle
            case Some(_)                                   => HasRecords
            case None if page.millisBehindLatest > 0       => HasRecords
            case None if page.nextIterator.isEmpty         => Finished
            case None                                      => Idle
          }
          synchronized {
            if (outcome == Idle && page.records.isEmpty) idleIterators(shardId) = position -> page.nextIterator.get
            else idleIterators.remove(shardId)
          }
          outcome
        } catch {
          case e: AccessException => throw e
          case _: TimestampInFutureException =>
            Idle // Kinesis' clock has not reached the position yet: nothing can be there
          case _: ThrottledException | _: ExpiredIteratorException =>
            synchronized(idleIterators.remove(shardId))
            Unanswered
          case e: KinesisClientException =>
            synchronized(idleIterators.remove(shardId))
            failed(shardId, e)
            Unanswered
        }
    }

  private def failed(shardId: String, e: KinesisClientException): Unit = {
    val since = synchronized(failingSince.getOrElseUpdate(shardId, clock()))
    if (clock() - since >= failureTimeoutMs) {
      throw new IllegalStateException(
        s"The driver's checks of shard $shardId of stream $stream have failed for ${clock() - since} ms (option " +
          s"kinesis.driverRetryTimeout): ${e.getMessage}", e)
    }
    log.warn(s"Checking shard $shardId of stream $stream for new records failed; trying again later: ${e.getMessage}")
  }

  private def inParallel[T](tasks: Seq[() => T]): Seq[T] =
    if (tasks.size <= 1) tasks.map(_.apply())
    else {
      val executor = synchronized {
        pool.getOrElse {
          val created = Executors.newFixedThreadPool(ProbeThreads, new ThreadFactory {
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
  /** Driver threads that check shards at once (the awslabs connector's kinesis.checkNewRecordThreads default). */
  val ProbeThreads = 8

  sealed trait Outcome
  case object HasRecords extends Outcome
  case object Idle extends Outcome
  case object Finished extends Outcome
  case object Unanswered extends Outcome

  /**
   * What a check found: the shard states with shards found read to their end marked finished, the shards with
   * records to read, the shards checked that had none (or are at their target), and those whose check failed.
   */
  final case class Checked(
      states: Map[String, ShardState], news: Set[String], quiet: Set[String], unanswered: Set[String])
}
