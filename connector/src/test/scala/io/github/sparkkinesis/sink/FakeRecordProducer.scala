package io.github.sparkkinesis.sink

import scala.collection.mutable

/**
 * A [[RecordProducer]] that holds every record until the test settles it: `confirmAll`, `failNext`, or on flush
 * when `confirmOnFlush` is set. It can also refuse records altogether, as a producer whose daemon died does.
 */
final class FakeRecordProducer extends RecordProducer {
  private val pending = mutable.Queue.empty[(OutgoingRecord, SendResult => Unit)]
  val sent: mutable.Buffer[OutgoingRecord] = mutable.Buffer.empty
  @volatile var flushes = 0
  @volatile var confirmOnFlush = false
  @volatile var refuseWith: Option[Exception] = None

  override def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit = synchronized {
    refuseWith.foreach(e => throw e)
    sent += record
    pending.enqueue((record, onDone))
  }

  override def flush(): Unit = {
    flushes += 1
    if (confirmOnFlush) confirmAll()
  }

  def pendingCount: Int = synchronized(pending.size)

  /** Settles the oldest pending record with `result`. */
  def settleNext(result: SendResult): Unit = {
    val (_, onDone) = synchronized(pending.dequeue())
    onDone(result)
  }

  def confirmAll(): Unit = while (pendingCount > 0) settleNext(SendResult.Written)
}
