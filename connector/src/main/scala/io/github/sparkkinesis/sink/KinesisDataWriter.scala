package io.github.sparkkinesis.sink

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}

import io.github.sparkkinesis.metrics.WriteMetrics

/**
 * What one task wrote; the driver adds these up for its log line. Spark deserializes it on the driver with the class
 * loader it started with, which a Spark Connect session's artifacts are not in: then tasks commit with none.
 */
private[sink] final case class KinesisWriterCommitMessage(records: Long, bytes: Long) extends WriterCommitMessage

/**
 * The sink's task-side limits; see [[KinesisDataWriter]].
 *
 * @param confirmTimeoutMs
 *   longest wait for room to hand a row over, or for the next of the task's rows to be confirmed
 */
private[sink] final case class WriterLimits(confirmTimeoutMs: Long, maxPendingRecords: Int, maxPendingBytes: Long)

/**
 * Writes one task's rows through its executor's shared producer (held by `lease`) and commits only when Kinesis has
 * confirmed every one of them, so a committed task has lost nothing. The first record that fails for good fails the
 * task (in `write` if it is noticed there, else in `commit`) with the producer's explanation; Spark then retries the
 * task, which may write some rows twice (at-least-once).
 *
 * Memory stays bounded twice: at most `maxPendingRecords` records or `maxPendingBytes` bytes of this task, and at most
 * the lease's executor limit across all tasks sharing the producer, wait for confirmation at a time; `write` blocks
 * beyond either. Sizes count partition key and data, as Kinesis does.
 *
 * A row the producer refuses fails this task only; the producer is discarded (and stopped once no task holds it) only
 * when it can take no records at all.
 *
 * A row larger than its stream's own limit (`MaxRecordSizeInKiB`, 1 MiB unless raised) fails this task with a message
 * naming the limit and how to raise it.
 *
 * @param maxRecordBytes
 *   the largest record a stream takes, partition key and data; fails if the stream cannot be written to; called once
 *   per stream name this task meets
 * @param metrics
 *   the executor's metrics of the rows written to a stream; called once per stream name this task meets
 * @param commitCounts
 *   whether `commit` returns a [[KinesisWriterCommitMessage]] with this task's counts, or null (Spark's driver threads
 *   cannot load the connector's classes: [[io.github.sparkkinesis.SparkThreadsClassLoading]])
 */
private[sink] final class KinesisDataWriter(
    columns: SinkColumns,
    lease: ProducerPool#Lease,
    limits: WriterLimits,
    maxRecordBytes: String => Long,
    metrics: String => WriteMetrics = _ => WriteMetrics.detached,
    commitCounts: Boolean = true)
    extends DataWriter[InternalRow] {

  private val lock = new Object
  private var pendingRecords = 0 // guarded by lock
  private var pendingBytes = 0L // guarded by lock
  private var failure: Option[String] = None // guarded by lock; the first failure only
  private var writtenRecords = 0L // guarded by lock
  private var writtenBytes = 0L // guarded by lock
  private val streamLimits = mutable.Map.empty[String, Long]
  private val streamMetrics = mutable.Map.empty[String, WriteMetrics]

  override def write(row: InternalRow): Unit = {
    val record = columns.extract(row)
    val size = record.size
    val limit = streamLimits.getOrElseUpdate(record.stream, maxRecordBytes(record.stream))
    if (size > limit) throw tooLarge(record, limit)
    val counts = streamMetrics.getOrElseUpdate(record.stream, metrics(record.stream))
    lock.synchronized {
      awaitLocked(s"room for a row of this task (it has $pendingRecords rows unconfirmed)") {
        pendingRecords == 0 ||
        (pendingRecords < limits.maxPendingRecords && pendingBytes + size <= limits.maxPendingBytes)
      }
      pendingRecords += 1
      pendingBytes += size
    }
    try takeExecutorRoom(size)
    catch {
      case NonFatal(e) =>
        settle(size, None)
        throw e
    }
    counts.rowsOutstanding.incrementAndGet()
    try lease.producer.send(record, result => done(size, result, counts))
    catch {
      case e: IllegalArgumentException =>
        giveBack(size, counts)
        throw new KinesisSinkException(
          s"The Kinesis producer refused a row for stream '${record.stream}': " +
            s"${e.getMessage}. This task fails (other tasks and the executor's producer go on); correct or filter " +
            "out such rows.",
          e)
      case NonFatal(e) =>
        giveBack(size, counts)
        lease.discard()
        throw new IllegalStateException(
          s"The Kinesis producer refused a row for stream '${record.stream}' (${e.getClass.getSimpleName}: " +
            s"${e.getMessage}); the task fails and Spark retries it with a new producer.",
          e)
    }
  }

  /**
   * Waits until Kinesis has confirmed every record of this task. It does not flush the shared producer, which sends
   * buffered records within `kinesis.sink.recordMaxBufferedTime` anyway: a flush would also send the half-filled
   * aggregates of the tasks still writing, and defeat aggregation.
   */
  override def commit(): WriterCommitMessage = lock.synchronized {
    awaitLocked(s"Kinesis to confirm this task's rows ($pendingRecords still unconfirmed)")(pendingRecords == 0)
    if (commitCounts) KinesisWriterCommitMessage(writtenRecords, writtenBytes) else null
  }

  /** Rows already handed to the producer cannot be called back; they may still be written (at-least-once). */
  override def abort(): Unit = ()

  override def close(): Unit = lease.release()

  /**
   * Waits under `lock` until `ready` holds, then fails if a record failed; also fails if no record of this task settles
   * for `confirmTimeoutMs`, since every record ends by its TTL once the producer has it, so a longer silence means a
   * stuck producer. The wait restarts at each settled record: rows held back for their key's order
   * (`kinesis.sink.strictKeyOrder`) reach the producer, and start their TTL, only one after the other.
   */
  private def awaitLocked(waitingFor: => String)(ready: => Boolean): Unit = {
    var deadline = System.nanoTime() + KinesisDataWriter.nanos(limits.confirmTimeoutMs)
    var unsettled = pendingRecords
    while (failure.isEmpty && !ready) {
      if (pendingRecords < unsettled) {
        unsettled = pendingRecords
        deadline = System.nanoTime() + KinesisDataWriter.nanos(limits.confirmTimeoutMs)
      }
      val left = deadline - System.nanoTime()
      if (left <= 0) throw stuck(waitingFor)
      lock.wait(math.max(1L, left / 1000000L))
    }
    failIfFailed()
  }

  /**
   * Takes room in the executor's limit, which other tasks' confirmations free (they notify the limit, not this task's
   * lock): so it waits in slices and looks for a failure of this task's own records between them.
   */
  private def takeExecutorRoom(size: Long): Unit = {
    val deadline = System.nanoTime() + KinesisDataWriter.nanos(limits.confirmTimeoutMs)
    while (!lease.executorLimit.tryAcquire(size, KinesisDataWriter.ExecutorWaitSliceMs)) {
      lock.synchronized(failIfFailed())
      if (deadline - System.nanoTime() < 0) {
        val (records, bytes) = lease.executorLimit.pending
        throw stuck(s"room in the executor's limit ($records rows, $bytes bytes of all its tasks unconfirmed)")
      }
    }
  }

  private def tooLarge(record: OutgoingRecord, limit: Long) = new KinesisSinkException(s"Cannot write a row to " +
    s"Kinesis stream '${record.stream}': its partition key and data are ${record.size} bytes together, more than " +
    s"the stream's limit of ${limit / 1024} KiB (MaxRecordSizeInKiB" +
    (if (limit == StreamCheck.DefaultMaxRecordKiB * 1024L) ", the default). " else "). ") +
    "Raise the stream's limit (up to 10240 KiB) with UpdateMaxRecordSize, for example `aws kinesis " +
    "update-max-record-size --stream-arn <the stream's ARN> --max-record-size-in-ki-b 10240` (the sink reads it " +
    s"again within ${StreamCheck.RefreshMs / 60000} minutes), or split or filter out such rows. This task fails.")

  private def stuck(waitingFor: String) = new IllegalStateException(s"Waited ${limits.confirmTimeoutMs} ms for " +
    s"$waitingFor; the task fails and Spark retries it. The Kinesis Producer Library's process may be stuck; see " +
    "the executor's log.")

  private def done(size: Long, result: SendResult, counts: WriteMetrics): Unit = {
    counts.rowsOutstanding.decrementAndGet()
    result match {
      case SendResult.Written(attempts) =>
        counts.rowsWritten.inc()
        counts.bytesWritten.inc(size)
        if (attempts > 1) counts.rowsRetried.inc()
      case SendResult.Failed(_) => counts.rowsFailed.inc()
    }
    lease.executorLimit.release(size)
    settle(size, Some(result))
  }

  /** The producer never took a record: gives back the room it held in both limits. */
  private def giveBack(size: Long, counts: WriteMetrics): Unit = {
    counts.rowsOutstanding.decrementAndGet()
    lease.executorLimit.release(size)
    settle(size, None)
  }

  /** One record of `size` bytes is no longer pending in this task: written, failed, or never handed over. */
  private def settle(size: Long, result: Option[SendResult]): Unit = lock.synchronized {
    pendingRecords -= 1
    pendingBytes -= size
    result.foreach {
      case SendResult.Written(_) =>
        writtenRecords += 1
        writtenBytes += size
      case SendResult.Failed(reason) =>
        if (failure.isEmpty) failure = Some(reason)
    }
    lock.notifyAll()
  }

  private def failIfFailed(): Unit = failure.foreach(reason => throw new KinesisSinkException(reason))
}

private object KinesisDataWriter {
  val ExecutorWaitSliceMs = 100L

  /**
   * `ms` in nanoseconds, at most Long.MaxValue: a deadline `now + nanos(ms)` may wrap around, but `deadline - now`
   * stays the time left, as System.nanoTime's arithmetic requires.
   */
  def nanos(ms: Long): Long = if (ms >= Long.MaxValue / 1000000L) Long.MaxValue else ms * 1000000L
}

/** A row could not be written to Kinesis; the message names the stream and the reason. */
final class KinesisSinkException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)
