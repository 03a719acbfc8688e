package io.github.sparkkinesis.sink

/** What became of one record handed to a [[RecordProducer]]. */
private[sink] sealed trait SendResult

private[sink] object SendResult {
  case object Written extends SendResult

  /** The record will not be written; `reason` names the stream and says why, without secrets. */
  final case class Failed(reason: String) extends SendResult
}

/**
 * Where the sink's tasks hand their records: the Kinesis Producer Library in production ([[KplProducer]]), a
 * fake in unit tests. One producer is shared by every task of an executor, so it knows nothing about tasks.
 */
private[sink] trait RecordProducer {

  /**
   * Queues `record` for writing and calls `onDone` exactly once, from another thread, when it is written or has
   * failed for good. Throws if the producer can take no more records at all (its process has died).
   */
  def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit

  /** Asks the producer to send everything it has buffered now, without waiting for the results. */
  def flush(): Unit
}
