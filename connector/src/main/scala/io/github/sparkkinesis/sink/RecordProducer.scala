package io.github.sparkkinesis.sink

/** What became of one record handed to a [[RecordProducer]]. */
private[sink] sealed trait SendResult

private[sink] object SendResult {

  /** Written after `attempts` attempts (1 unless the producer retried it). */
  final case class Written(attempts: Int) extends SendResult

  /** The record will not be written; `reason` names the stream and says why, without secrets. */
  final case class Failed(reason: String) extends SendResult
}

/**
 * Where the sink's tasks hand their records: in production a [[RoutingProducer]] over the Kinesis Producer Library
 * ([[KplProducer]]) or PutRecords calls ([[PutRecordsProducer]]), and PutRecord calls ([[PutRecordProducer]]) for
 * records too large for them; a fake in unit tests. One producer is shared by every task of an executor, so it knows
 * nothing about tasks. It sends what it buffers on its own schedule (within `kinesis.sink.recordMaxBufferedTime`), so
 * tasks never ask it to flush: a flush would send other tasks' half-filled aggregates and requests too.
 */
private[sink] trait RecordProducer {

  /**
   * Queues `record` for writing and calls `onDone` exactly once, from another thread, when it is written or has failed
   * for good. Throws IllegalArgumentException if it refuses this record (the producer goes on serving others), any
   * other exception if it can take no more records at all (its process has died).
   */
  def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit
}
