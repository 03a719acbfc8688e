package io.github.sparkkinesis.source

import java.util.concurrent.{Callable, ExecutorService, Executors, ThreadFactory}

import scala.collection.mutable

import io.github.sparkkinesis.client.{ExpiredIteratorException, KinesisClient, ThrottledException}
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}

/**
 * The driver's cheap check for new records, so that no empty micro-batch is started: one GetRecords call
 * with limit 1 per readable shard, at most once per `fetchIntervalMs` per shard. While a shard stays idle its
 * iterator is kept and reused (an empty answer does not move the position). A closed shard found read to its
 * end is marked finished, which makes its children readable and checked in the same call.
 */
private[source] final class NewRecordsProbe(
    client: KinesisClient,
    stream: String,
    fetchIntervalMs: Long,
    clock: () => Long = () => System.currentTimeMillis())
  extends AutoCloseable {
  import NewRecordsProbe._

  private val lastChecks = mutable.Map.empty[String, LastCheck]
  private var pool: Option[ExecutorService] = None

  /** The shards with those found read to their end marked finished, and whether any shard has records. */
  def check(shards: Map[String, ShardState]): (Map[String, ShardState], Boolean) = {
    var current = shards
    var checked = Set.empty[String]
    var toCheck = readable(current)
    while (toCheck.nonEmpty) {
      val outcomes = toCheck.zip(inParallel(toCheck.map(id => () => checkShard(id, current(id).position))))
      if (outcomes.exists(_._2 == HasRecords)) return (current, true)
      checked ++= toCheck
      val finished = outcomes.collect { case (id, Finished) => id }
      current ++= finished.map(id => id -> current(id).copy(position = ShardPosition.ShardEnd))
      toCheck = if (finished.isEmpty) Nil else readable(current).filterNot(checked)
    }
    (current, false)
  }

  private def readable(shards: Map[String, ShardState]): Seq[String] = ShardState.readable(shards)

  private def checkShard(shardId: String, position: ShardPosition): Outcome = {
    val previous = synchronized(lastChecks.get(shardId)).filter(_.position == position)
    val now = clock()
    previous match {
      case Some(last) if last.outcome == Finished                  => Finished
      case Some(last) if now - last.atMs < fetchIntervalMs         => last.outcome
      case _ if ShardFetcher.startsInFuture(position, now)         => Idle
      case _ =>
        val outcome =
          try {
            val iterator = previous.flatMap(_.iterator).getOrElse(
              client.shardIterator(stream, shardId, position.iteratorStart.get))
            val answer = client.getRecords(stream, iterator, 1)
            val outcome =
              if (answer.records.nonEmpty || answer.millisBehindLatest > 0) HasRecords
              else if (answer.nextIterator.isEmpty) Finished
              else Idle
            remember(shardId, LastCheck(position, answer.nextIterator.filter(_ => outcome == Idle), now, outcome))
            outcome
          } catch {
            case _: ThrottledException | _: ExpiredIteratorException =>
              remember(shardId, LastCheck(position, None, now, Idle))
              Idle
          }
        outcome
    }
  }

  private def remember(shardId: String, check: LastCheck): Unit = synchronized(lastChecks(shardId) = check)

  private def inParallel[T](tasks: Seq[() => T]): Seq[T] =
    if (tasks.size <= 1) tasks.map(_.apply())
    else {
      val executor = synchronized {
        pool.getOrElse {
          val created = Executors.newFixedThreadPool(8, new ThreadFactory {
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

private object NewRecordsProbe {
  sealed trait Outcome
  case object HasRecords extends Outcome
  case object Idle extends Outcome
  case object Finished extends Outcome

  final case class LastCheck(position: ShardPosition, iterator: Option[String], atMs: Long, outcome: Outcome)
}
