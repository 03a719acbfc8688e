package io.github.sparkkinesis.sink

import java.util.ArrayDeque
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException,
  Backoff,
  KinesisClientException,
  PutEntry,
  PutOutcome,
  ResourceMissingException,
  SinkClient
}

/**
 * [[RecordProducer]] on PutRecords calls through the connector's own client (`kinesis.sink.producer=PutRecords`): no
 * native process, one Kinesis record per row. Records go to one of `lanes` lanes by stream and partition key; each lane
 * has a thread of its own that sends one request at a time, of at most [[PutRecordsProducer.MaxEntries]] records and
 * [[PutRecordsProducer.MaxRequestBytes]] of one stream, as soon as that much is queued or its oldest record has waited
 * `maxBufferedMs`. So at most `lanes` requests are in flight, and the records of one partition key go out in the order
 * handed over, one request after the other. An entry Kinesis refuses (throttling of its shard, an internal failure) or
 * a whole request that fails for a passing reason (throttled, a reset connection, a server error) is sent again, ahead
 * of the lane's later records, after a jittered back-off, until `recordTtlMs` after the record was handed over; it then
 * fails with the last error. A record refused for good (no permission, no such stream) fails at once. A retried record
 * can land after later records of its key that went out in the meantime; `kinesis.sink.strictKeyOrder` prevents that.
 */
private[sink] final class PutRecordsProducer(
    client: () => SinkClient,
    lanes: Int,
    maxBufferedMs: Long,
    recordTtlMs: Long,
    backoff: () => Backoff,
    clock: () => Long = () => System.currentTimeMillis()) extends StoppableProducer {
  import PutRecordsProducer._

  private val log = LoggerFactory.getLogger(getClass)
  private val outstanding = new AtomicLong()
  @volatile private var stopped = false
  private val laneList = Vector.tabulate(lanes)(i => new Lane(i))

  override def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit = {
    if (stopped) throw new IllegalStateException("The sink's PutRecords producer was stopped: it takes no more rows.")
    val now = clock()
    outstanding.incrementAndGet()
    laneList(Math.floorMod((record.stream, record.partitionKey).hashCode, lanes))
      .add(new Queued(record, onDone, now, now + recordTtlMs))
  }

  override def outstandingRecords: Long = outstanding.get()

  /** Drops the records not yet written, as the KPL's destroy does: their tasks have not committed. */
  override def destroy(): Unit = {
    stopped = true
    laneList.foreach(_.stop())
  }

  /** A record handed over and not yet written or failed: the attempts made, and when it may be sent again. */
  private final class Queued(
      val record: OutgoingRecord,
      val onDone: SendResult => Unit,
      val handedOverAt: Long,
      val deadline: Long) {
    var attempts = 0
    var notBefore = Long.MinValue
    var lastError = ""
  }

  /** One stream's records in a lane, oldest first, and their bytes. */
  private final class StreamQueue {
    val records = new ArrayDeque[Queued]()
    var bytes = 0L

    def add(q: Queued, first: Boolean): Unit = {
      if (first) records.addFirst(q) else records.addLast(q)
      bytes += q.record.size
    }

    def full: Boolean = records.size >= MaxEntries || bytes >= MaxRequestBytes

    /** When the head may go: once sendable, and either a full request is queued, it is a retry, or it waited enough. */
    def dueAt: Long = {
      val head = records.peekFirst()
      if (full || head.attempts > 0) head.notBefore else math.max(head.notBefore, head.handedOverAt + maxBufferedMs)
    }

    /** The next request's records, from the head: those sendable now, within one request's limits. */
    def take(now: Long): Vector[Queued] = {
      val out = Vector.newBuilder[Queued]
      var (n, size) = (0, 0L)
      while (!records.isEmpty && n < MaxEntries && records.peekFirst().notBefore <= now &&
        (n == 0 || size + records.peekFirst().record.size <= MaxRequestBytes)) {
        val q = records.pollFirst()
        bytes -= q.record.size
        size += q.record.size
        n += 1
        out += q
      }
      out.result()
    }
  }

  private final class Lane(index: Int) {
    private val queues = mutable.LinkedHashMap.empty[String, StreamQueue] // guarded by this
    private val waits = backoff()

    /** Started with the lane's first record: a producer whose rows have few keys runs few threads. */
    private var thread: Option[Thread] = None // guarded by this

    def add(q: Queued): Unit = synchronized {
      if (thread.isEmpty) {
        val t = new Thread(new Runnable { override def run(): Unit = loop() }, s"spark-kinesis-put-records-$index")
        t.setDaemon(true)
        t.start()
        thread = Some(t)
      }
      val queue = queues.getOrElseUpdate(q.record.stream, new StreamQueue)
      queue.add(q, first = false)
      if (queue.records.size == 1 || queue.full) notifyAll()
    }

    def stop(): Unit = synchronized(thread.foreach(_.interrupt()))

    private def loop(): Unit =
      try {
        while (!stopped) {
          val (stream, batch) = nextRequest()
          send(stream, batch)
        }
      } catch {
        case _: InterruptedException => // destroyed
      }

    /** Waits until some stream's head is due; takes its request. */
    private def nextRequest(): (String, Vector[Queued]) = synchronized {
      var request: Option[(String, Vector[Queued])] = None
      while (request.isEmpty) {
        if (stopped) throw new InterruptedException("stopped")
        val now = clock()
        val due = queues.iterator.map { case (stream, queue) => (stream, queue, queue.dueAt) }.toVector
        due.filter(_._3 <= now).sortBy(_._3).headOption match {
          case Some((stream, queue, _)) =>
            request = Some((stream, queue.take(now)))
            if (queue.records.isEmpty) queues.remove(stream)
          case None =>
            val next = due.map(_._3).reduceOption(_ min _)
            next match {
              case Some(at) => wait(math.max(1L, at - now))
              case None => wait()
            }
        }
      }
      request.get
    }

    /** One PutRecords call for `batch`; what Kinesis stored is confirmed, the rest is sent again or fails. */
    private def send(stream: String, batch: Vector[Queued]): Unit = {
      batch.foreach(_.attempts += 1)
      val outcomes =
        try Right(client().writeRecords(stream, batch.map(q => PutEntry(q.record.partitionKey,
            q.record.explicitHashKey, q.record.data))))
        catch {
          case e: InterruptedException => throw e
          case e @ (_: AccessException | _: ResourceMissingException) => Left((e.getMessage, false))
          case e: KinesisClientException => Left((e.getMessage, true))
          case NonFatal(e) => Left((s"${e.getClass.getSimpleName}: ${e.getMessage}", false))
        }
      outcomes match {
        case Right(results) if results.size == batch.size =>
          val refused = batch.zip(results).collect { case (q, PutOutcome.Refused(code, message)) =>
            q.lastError = s"$code: $message"
            q
          }
          batch.zip(results).foreach {
            case (q, PutOutcome.Stored(_)) => done(q, SendResult.Written(q.attempts))
            case _ =>
          }
          if (refused.isEmpty) waits.reset() else retry(stream, refused)
        case Right(results) =>
          batch.foreach { q =>
            done(q, failed(q, s"Kinesis answered ${results.size} results for a PutRecords call of ${batch.size} records."))
          }
        case Left((why, passing)) =>
          batch.foreach(_.lastError = why)
          if (passing) {
            log.warn(s"A PutRecords call of ${batch.size} records to Kinesis stream '$stream' failed; sending them " +
              s"again: $why")
            retry(stream, batch)
          } else batch.foreach(q => done(q, failed(q, why)))
      }
    }

    /** Puts `batch` back at the head of its stream's queue after a back-off; records past their TTL fail instead. */
    private def retry(stream: String, batch: Vector[Queued]): Unit = {
      val now = clock()
      val (expired, again) = batch.partition(_.deadline <= now)
      expired.foreach(q =>
        done(
          q,
          failed(
            q,
            s"it was not written within kinesis.sink.recordTtl ($recordTtlMs ms), after ${q.attempts} attempt(s); " +
              s"the last error was: ${q.lastError}")))
      if (again.nonEmpty) {
        val at = now + waits.nextDelayMs()
        log.debug(s"${again.size} records for Kinesis stream '$stream' are sent again: ${again.head.lastError}")
        synchronized {
          val queue = queues.getOrElseUpdate(stream, new StreamQueue)
          again.reverseIterator.foreach { q =>
            q.notBefore = math.min(at, q.deadline)
            queue.add(q, first = true)
          }
          notifyAll()
        }
      }
    }
  }

  private def done(q: Queued, result: SendResult): Unit = {
    outstanding.decrementAndGet()
    try q.onDone(result)
    catch {
      case NonFatal(e) => log.warn(s"A write task's callback failed on a record's result: $e")
    }
  }

  private def failed(q: Queued, why: String): SendResult =
    SendResult.Failed(s"Could not write a row of ${q.record.size} bytes to Kinesis stream '${q.record.stream}' with " +
      s"PutRecords (kinesis.sink.producer=PutRecords): $why The task fails and Spark retries it; rows it had already " +
      "written may be written twice (the sink delivers at least once).")
}

private[sink] object PutRecordsProducer {

  /** Most records of one PutRecords call (AWS's limit). */
  val MaxEntries = 500

  /** Most bytes, partition keys and data, of one PutRecords call (AWS's limit: 5 MiB). */
  val MaxRequestBytes: Long = 5L * 1024 * 1024
}
