package io.github.sparkkinesis.sink

import scala.collection.mutable

/**
 * A [[RecordProducer]] that holds every record until the test settles it (`settleNext`, `confirmAll`). It can also
 * refuse records, as the KPL does a record its own checks reject (IllegalArgumentException) or every record once its
 * daemon died (any other exception), and it counts how often it was destroyed.
 */
final class FakeRecordProducer extends StoppableProducer {
  private val pending = mutable.Queue.empty[(OutgoingRecord, SendResult => Unit)]
  val sent: mutable.Buffer[OutgoingRecord] = mutable.Buffer.empty
  @volatile var refuse: OutgoingRecord => Option[Exception] = (_: OutgoingRecord) => None
  @volatile var destroyed = 0

  override def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit = synchronized {
    refuse(record).foreach(e => throw e)
    sent += record
    pending.enqueue((record, onDone))
  }

  override def destroy(): Unit = destroyed += 1

  def pendingCount: Int = synchronized(pending.size)

  /** Settles the oldest pending record with `result`. */
  def settleNext(result: SendResult): Unit = {
    val (_, onDone) = synchronized(pending.dequeue())
    onDone(result)
  }

  def confirmAll(): Unit = while (pendingCount > 0) settleNext(SendResult.Written(1))
}
