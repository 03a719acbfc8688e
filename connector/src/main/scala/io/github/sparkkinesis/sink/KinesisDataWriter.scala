package io.github.sparkkinesis.sink

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}

/** What one task wrote; the driver adds these up for its log line. */
private[sink] final case class KinesisWriterCommitMessage(records: Long, bytes: Long) extends WriterCommitMessage

/** The sink's task-side limits; see [[KinesisDataWriter]]. */
private[sink] final case class WriterLimits(
    flushWaitTimeMs: Long,
    confirmTimeoutMs: Long,
    maxPendingRecords: Int,
    maxPendingBytes: Long)

/**
 * Writes one task's rows through a shared [[RecordProducer]] and commits only when Kinesis has confirmed every one
 * of them, so a committed task has lost nothing. The first record that fails for good fails the task (in `write`
 * if it is noticed there, else in `commit`) with the producer's explanation; Spark then retries the task, which may
 * write some rows twice (at-least-once).
 *
 * At most `maxPendingRecords` records or `maxPendingBytes` bytes of this task wait for confirmation at a time;
 * `write` blocks beyond that, which keeps a fast task from filling the executor's memory.
 *
 * @param checkStream fails if a stream cannot be written to; called once per stream name this task meets
 * @param onProducerBroken called when the producer refuses records altogether (its process died)
 */
private[sink] final class KinesisDataWriter(
    columns: SinkColumns,
    producer: RecordProducer,
    limits: WriterLimits,
    checkStream: String => Unit,
    onProducerBroken: () => Unit)
  extends DataWriter[InternalRow] {

  private val lock = new Object
  private var pendingRecords = 0 // guarded by lock
  private var pendingBytes = 0L // guarded by lock
  private var failure: Option[String] = None // guarded by lock; the first failure only
  private var writtenRecords = 0L // guarded by lock
  private var writtenBytes = 0L // guarded by lock
  private val checkedStreams = mutable.Set.empty[String]

  override def write(row: InternalRow): Unit = {
    val record = columns.extract(row)
    if (checkedStreams.add(record.stream)) checkStream(record.stream)
    val size = record.data.length.toLong
    lock.synchronized {
      while (failure.isEmpty && pendingRecords > 0 &&
          (pendingRecords >= limits.maxPendingRecords || pendingBytes + size > limits.maxPendingBytes)) {
        lock.wait(limits.flushWaitTimeMs)
      }
      failIfFailed()
      pendingRecords += 1
      pendingBytes += size
    }
    try producer.send(record, result => done(size, result))
    catch {
      case e: Exception =>
        onProducerBroken()
        throw new IllegalStateException(
          s"The Kinesis producer refused a row for stream '${record.stream}' (${e.getClass.getSimpleName}: " +
            s"${e.getMessage}); the task fails and Spark retries it with a new producer.", e)
    }
  }

  /**
   * Waits until Kinesis has confirmed every record of this task, flushing every `flushWaitTimeMs`. The producer is
   * never called under `lock`: its callbacks take `lock` on the producer's own thread.
   */
  override def commit(): WriterCommitMessage = {
    val deadline = System.nanoTime() + limits.confirmTimeoutMs * 1000000L
    var settled = false
    while (!settled) {
      producer.flush()
      settled = lock.synchronized {
        if (failure.isEmpty && pendingRecords > 0) {
          val left = deadline - System.nanoTime()
          if (left <= 0) {
            throw new IllegalStateException(s"Kinesis confirmed only part of this task's rows within " +
              s"${limits.confirmTimeoutMs} ms ($pendingRecords still unconfirmed); the task fails and Spark " +
              "retries it. The Kinesis Producer Library's process may be stuck; see the executor's log.")
          }
          lock.wait(math.max(1L, math.min(limits.flushWaitTimeMs, left / 1000000L)))
        }
        failure.nonEmpty || pendingRecords == 0
      }
    }
    lock.synchronized {
      failIfFailed()
      KinesisWriterCommitMessage(writtenRecords, writtenBytes)
    }
  }

  /** Rows already handed to the producer cannot be called back; they may still be written (at-least-once). */
  override def abort(): Unit = ()

  override def close(): Unit = ()

  private def done(size: Long, result: SendResult): Unit = lock.synchronized {
    pendingRecords -= 1
    pendingBytes -= size
    result match {
      case SendResult.Written =>
        writtenRecords += 1
        writtenBytes += size
      case SendResult.Failed(reason) =>
        if (failure.isEmpty) failure = Some(reason)
    }
    lock.notifyAll()
  }

  private def failIfFailed(): Unit = failure.foreach(reason => throw new KinesisSinkException(reason))
}

/** A row could not be written to Kinesis; the message names the stream and the reason. */
final class KinesisSinkException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)
