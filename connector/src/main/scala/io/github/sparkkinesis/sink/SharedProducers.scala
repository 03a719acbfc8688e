package io.github.sparkkinesis.sink

import scala.collection.mutable
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{Backoff, IdleSweeper, SharedClients, SinkClient}
import io.github.sparkkinesis.metrics.ProducerMetrics

/** A [[RecordProducer]] that owns resources (the KPL's daemon) to give back when no task needs it any more. */
private[sink] trait StoppableProducer extends RecordProducer {

  /** Ends the producer; records not yet written are dropped. */
  def destroy(): Unit

  /** Records the producer holds in its own queue, not yet written or failed (the KPL's outstanding records). */
  def outstandingRecords: Long = 0L
}

/**
 * One producer per distinct [[ProducerSettings]], shared by every write task that holds a [[ProducerPool#Lease]] on it,
 * with the [[PendingLimit]] those tasks share (the executor's cap on unconfirmed records). A producer that failed is
 * discarded: no new task gets it, but it is destroyed only once the last task holding it lets go, so a task's failure
 * never drops the records other tasks still wait for. A producer no task has held for `idleMs` is destroyed by
 * [[destroyIdle]]. Keys are settings, never resolved credentials: rotating credentials (an assumed role) keep one
 * producer, whose provider the KPL asks again for fresh ones.
 */
private[sink] final class ProducerPool(
    create: ProducerSettings => StoppableProducer,
    idleMs: Long = Long.MaxValue,
    clock: () => Long = () => System.currentTimeMillis()) {
  private val log = LoggerFactory.getLogger(getClass)

  private final class Shared(val producer: StoppableProducer, val limit: PendingLimit) {
    var holders = 0 // guarded by the pool
    var discarded = false // guarded by the pool
    var idleSinceMs = clock() // guarded by the pool; meaningful while holders is 0
  }

  private val current = mutable.Map.empty[ProducerSettings, Shared] // guarded by this

  /** A task's hold on the producer for `settings`, created if there is none; the task must [[Lease.release]] it. */
  def acquire(settings: ProducerSettings): Lease = synchronized {
    val shared = current.getOrElseUpdate(
      settings,
      new Shared(create(settings), new PendingLimit(settings.maxPendingRecords, settings.maxPendingBytes)))
    shared.holders += 1
    new Lease(settings, shared)
  }

  /** Destroys the producers no task has held for `idleMs`; returns how many. */
  def destroyIdle(): Int = synchronized {
    val now = clock()
    val idle = current.filter { case (_, s) => s.holders == 0 && now - s.idleSinceMs >= idleMs }
    idle.foreach { case (settings, s) =>
      current.remove(settings)
      stop(s.producer)
    }
    idle.size
  }

  /** The records the current producers hold in their own queues ([[StoppableProducer.outstandingRecords]]). */
  def outstandingRecords: Long = synchronized(current.values.map(_.producer.outstandingRecords).sum)

  /** Destroys every producer, held or not; for the JVM's shutdown. */
  def destroyAll(): Unit = synchronized {
    current.values.foreach(s => stop(s.producer))
    current.clear()
  }

  final class Lease private[ProducerPool] (settings: ProducerSettings, shared: Shared) {
    private var released = false // guarded by the pool

    def producer: RecordProducer = shared.producer

    /** The executor's cap on the records its tasks have handed to this producer and not seen confirmed. */
    def executorLimit: PendingLimit = shared.limit

    /** The producer failed: later tasks get a new one; this one ends when its last holder lets go. */
    def discard(): Unit = ProducerPool.this.synchronized {
      if (!shared.discarded) {
        shared.discarded = true
        if (current.get(settings).exists(_ eq shared)) current.remove(settings)
      }
      stopIfUnused()
    }

    /** This task is done with the producer; releasing twice does nothing. */
    def release(): Unit = ProducerPool.this.synchronized {
      if (!released) {
        released = true
        shared.holders -= 1
        if (shared.holders == 0) shared.idleSinceMs = clock()
        stopIfUnused()
      }
    }

    private def stopIfUnused(): Unit = if (shared.discarded && shared.holders == 0) stop(shared.producer)
  }

  private def stop(producer: StoppableProducer): Unit =
    try producer.destroy()
    catch {
      case NonFatal(e) => log.warn(s"Could not stop a Kinesis producer cleanly: $e")
    }
}

/**
 * This JVM's pool of producers (the [[KplProducer]] or a [[PutRecordsProducer]], and PutRecord for rows too large for
 * them), shared by every write task of the executor: the KPL's daemon, its connections and its aggregation buffers
 * outlive single tasks. The daemons end when the JVM does (a shutdown hook destroys them), after failing, or after 10
 * minutes without a write task. Nothing is lost by not flushing at shutdown: a task commits only once all its records
 * are confirmed, so a record still buffered belongs to a task that did not commit and that Spark runs again.
 */
private[sink] object SharedProducers {
  val pool = new ProducerPool(create, IdleSweeper.IdleMs)

  /**
   * The producer for `settings`: the KPL, or PutRecords calls, for rows of up to 1 MiB, and PutRecord calls for larger
   * ones.
   */
  private def create(settings: ProducerSettings): StoppableProducer = {
    val client = () => SinkClient.of(SharedClients(settings.client))
    val backoff = () => new Backoff(settings.client.retry.baseDelayMs, settings.client.retry.maxDelayMs)
    val small =
      if (settings.putRecords) {
        new PutRecordsProducer(
          client,
          settings.maxConnections,
          settings.recordMaxBufferedTimeMs,
          settings.recordTtlMs,
          backoff)
      } else new KplProducer(settings)
    new RoutingProducer(
      small,
      new PutRecordProducer(client, settings.recordTtlMs, backoff, RoutingProducer.PutRecordThreads),
      RoutingProducer.KplMaxRecordBytes,
      settings.strictKeyOrder)
  }

  IdleSweeper.start("spark-kinesis-idle-producers")(() => pool.destroyIdle())
  ProducerMetrics.register(() => pool.outstandingRecords)

  Runtime.getRuntime.addShutdownHook(new Thread("spark-kinesis-producers-shutdown") {
    override def run(): Unit = pool.destroyAll()
  })
}
