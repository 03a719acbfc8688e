package io.github.sparkkinesis.sink

import scala.collection.mutable
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{Backoff, KinesisClientException, PutEntry, PutOutcome, SinkClient}

/**
 * [[RecordProducer]] on PutRecords calls through the connector's own client (`kinesis.sink.producer=PutRecords`): no
 * native process, one Kinesis record per row. Records go to one of `lanes` lanes by stream and partition key; each lane
 * has a thread of its own (started with its first record) that sends one request at a time, of at most
 * [[PutRecordsQueue.MaxEntries]] records and [[PutRecordsQueue.MaxRequestBytes]] of one stream, as soon as that much is
 * queued or its oldest record has waited `maxBufferedMs`; among a lane's streams, the one whose oldest record is oldest
 * goes first. So at most `lanes` requests are in flight, and the records of one partition key go out in the order
 * handed over, one request after the other. An entry Kinesis refuses (throttling of its shard, an internal failure) or
 * a whole request that fails for a passing reason ([[SinkFailures.passing]]) is sent again, ahead of its stream's later
 * records, after a jittered back-off of that stream's, until `recordTtlMs` after the record was handed over; a record
 * still queued then fails too, never sent. A record Kinesis refuses for good (no permission, no such stream, an invalid
 * request) fails at once. A retried record can land after later records of its key that the same request stored;
 * `kinesis.sink.strictKeyOrder` prevents that. Times are the JVM's monotonic clock.
 */
private[sink] final class PutRecordsProducer(
    client: () => SinkClient,
    lanes: Int,
    maxBufferedMs: Long,
    recordTtlMs: Long,
    backoff: () => Backoff) extends StoppableProducer {
  import PutRecordsQueue.Queued

  private val log = LoggerFactory.getLogger(getClass)
  private val outstanding = new java.util.concurrent.atomic.AtomicLong()
  @volatile private var stopped = false

  /** What ended a lane's thread other than [[destroy]]: the producer then takes no more records. */
  @volatile private var broken: Option[Throwable] = None
  private val laneList = Vector.tabulate(lanes)(i => new Lane(i))

  override def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit = {
    broken.foreach { e =>
      throw new IllegalStateException(s"The sink's PutRecords producer failed and takes no more rows: $e", e)
    }
    if (stopped) throw new IllegalStateException("The sink's PutRecords producer was stopped: it takes no more rows.")
    val now = clockMs()
    outstanding.incrementAndGet()
    laneList(Math.floorMod((record.stream, record.partitionKey).hashCode, lanes))
      .add(new Queued(record, onDone, now, SinkFailures.deadline(now, recordTtlMs)))
  }

  override def outstandingRecords: Long = outstanding.get()

  /** Drops the records not yet written, as the KPL's destroy does: their tasks have not committed. */
  override def destroy(): Unit = {
    stopped = true
    laneList.foreach(_.stop())
  }

  private def clockMs(): Long = System.nanoTime() / 1000000L

  private final class Lane(index: Int) {
    private val queues = mutable.LinkedHashMap.empty[String, PutRecordsQueue] // guarded by this
    private val waits = mutable.Map.empty[String, Backoff] // by stream; used by the lane's thread only

    /** Started with the lane's first record: a producer whose rows have few keys runs few threads. */
    private var thread: Option[Thread] = None // guarded by this

    def add(q: Queued): Unit = synchronized {
      if (thread.isEmpty) {
        val t = new Thread(new Runnable { override def run(): Unit = loop() }, s"spark-kinesis-put-records-$index")
        t.setDaemon(true)
        t.start()
        thread = Some(t)
      }
      val queue = queues.getOrElseUpdate(q.record.stream, new PutRecordsQueue(maxBufferedMs))
      queue.add(q, first = false)
      if (queue.size == 1 || queue.full) notifyAll()
    }

    def stop(): Unit = synchronized(thread.foreach(_.interrupt()))

    private def loop(): Unit = {
      var inFlight = Vector.empty[Queued]
      try {
        while (!stopped) {
          val (stream, batch) = nextRequest()
          inFlight = batch
          send(stream, batch)
          inFlight = Vector.empty
        }
      } catch {
        case _: InterruptedException => // destroyed
        case e: Throwable => // a defect or the JVM in trouble: fail what the lane holds, and refuse more
          broken = Some(e)
          log.error(s"A thread of the sink's PutRecords producer failed; its rows fail and the producer is replaced", e)
          val held = synchronized {
            val all = queues.values.flatMap(_.drain()).toVector
            queues.clear()
            all
          }
          // A record sent again is both in flight and queued: one result each.
          (inFlight ++ held).distinct.filterNot(_.finished).foreach(q =>
            done(q, failed(q, s"the producer failed: $e.")))
          if (!NonFatal(e)) throw e
      }
    }

    /** Waits until some stream's oldest record is due; takes that stream's next request. */
    private def nextRequest(): (String, Vector[Queued]) = synchronized {
      var request: Option[(String, Vector[Queued])] = None
      while (request.isEmpty) {
        if (stopped) throw new InterruptedException("stopped")
        val now = clockMs()
        val candidates = queues.toVector
        candidates.filter(_._2.dueAt <= now).sortBy(_._2.oldestHandedOverAt).headOption match {
          case Some((stream, queue)) =>
            request = Some((stream, queue.take(now)))
            if (queue.size == 0) queues.remove(stream)
          case None =>
            candidates.map(_._2.dueAt).reduceOption(_ min _) match {
              case Some(at) => wait(math.max(1L, at - now))
              case None => wait()
            }
        }
      }
      request.get
    }

    /**
     * One PutRecords call for the records of `batch` still within their TTL; what Kinesis stored is confirmed, the rest
     * is sent again or fails.
     */
    private def send(stream: String, batch: Vector[Queued]): Unit = {
      val (expired, live) = batch.partition(_.deadline <= clockMs())
      expired.foreach(q => done(q, outOfTime(q)))
      if (live.nonEmpty) {
        live.foreach(_.attempts += 1)
        val outcome: Either[Throwable, Seq[PutOutcome]] =
          try Right(client().writeRecords(
              stream,
              live.map(q => PutEntry(q.record.partitionKey, q.record.explicitHashKey, q.record.data))))
          catch {
            case NonFatal(e) => Left(e)
          }
        outcome match {
          case Right(results) if results.size == live.size => stored(stream, live.zip(results))
          case Right(results) =>
            live.foreach(q =>
              done(q, failed(q, s"Kinesis answered ${results.size} results to a call of ${live.size}.")))
          case Left(e: KinesisClientException) if SinkFailures.passing(e) =>
            log.warn(s"A PutRecords call of ${live.size} records to Kinesis stream '$stream' failed; sending them " +
              s"again: ${e.getMessage}")
            live.foreach(_.lastError = e.getMessage)
            retry(stream, live)
          case Left(e: KinesisClientException) => live.foreach(q => done(q, failed(q, e.getMessage)))
          case Left(e) => live.foreach(q => done(q, failed(q, s"${e.getClass.getSimpleName}: ${e.getMessage}")))
        }
      }
    }

    /** Confirms the records Kinesis stored; those it refused go again. */
    private def stored(stream: String, answered: Vector[(Queued, PutOutcome)]): Unit = {
      val refused = answered.flatMap {
        case (q, PutOutcome.Stored(_)) =>
          done(q, SendResult.Written(q.attempts))
          None
        case (q, PutOutcome.Refused(code, message)) =>
          q.lastError = s"$code: $message"
          Some(q)
      }
      if (refused.isEmpty) waits.get(stream).foreach(_.reset()) else retry(stream, refused)
    }

    /** Puts `batch` back at the head of its stream's queue after the stream's back-off; records past their TTL fail. */
    private def retry(stream: String, batch: Vector[Queued]): Unit = {
      val now = clockMs()
      val (expired, again) = batch.partition(_.deadline <= now)
      expired.foreach(q => done(q, outOfTime(q)))
      if (again.nonEmpty) {
        val at = now + waits.getOrElseUpdate(stream, backoff()).nextDelayMs()
        synchronized {
          val queue = queues.getOrElseUpdate(stream, new PutRecordsQueue(maxBufferedMs))
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
    q.finished = true
    outstanding.decrementAndGet()
    try q.onDone(result)
    catch {
      case NonFatal(e) => log.warn(s"A write task's callback failed on a record's result: $e")
    }
  }

  private def outOfTime(q: Queued): SendResult =
    failed(
      q,
      s"it was not written within kinesis.sink.recordTtl ($recordTtlMs ms), after ${q.attempts} attempt(s)" +
        (if (q.lastError.isEmpty) " (Kinesis was slow to take the rows before it)."
         else s"; the last error was: " +
           s"${q.lastError}"))

  private def failed(q: Queued, why: String): SendResult =
    SinkFailures.failed(q.record, "PutRecords (kinesis.sink.producer=PutRecords)", why)
}
