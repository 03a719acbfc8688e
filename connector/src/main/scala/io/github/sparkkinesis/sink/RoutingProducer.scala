package io.github.sparkkinesis.sink

import scala.collection.mutable
import scala.util.control.NonFatal

/**
 * Sends records of at most `smallMaxBytes` (partition key and data) through `small` (the Kinesis Producer Library, or
 * PutRecords calls), and larger ones through `large` (PutRecord calls; the KPL carries records up to 1 MiB), keeping
 * each stream's partition keys in order: a record of a key goes out only once every earlier record of that key is
 * confirmed, if either of them is large, or always with `strictKeyOrder`; otherwise small records follow each other
 * without waiting, in the order `small` keeps, which a retried record breaks (it lands after records sent while it
 * waited). Records held back wait here, in order, and already count against the limits on their tasks' unconfirmed
 * records, so a commit waits for them too. A record held back that a producer then refuses is reported as failed
 * through its `onDone`.
 */
private[sink] final class RoutingProducer(
    small: StoppableProducer,
    large: StoppableProducer,
    smallMaxBytes: Long,
    strictKeyOrder: Boolean = false)
    extends StoppableProducer {

  /** One stream's partition key: what it has in flight (one way only) and what waits behind that. */
  private final class Lane {
    var inFlight = 0
    var inFlightLarge = false
    val waiting = mutable.Queue.empty[(OutgoingRecord, SendResult => Unit)]
  }

  private val lanes = mutable.Map.empty[(String, String), Lane] // guarded by this; only lanes with records

  override def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit = synchronized {
    val key = (record.stream, record.partitionKey)
    val lane = lanes.getOrElseUpdate(key, new Lane)
    if (lane.waiting.isEmpty && mayGo(lane, record)) {
      try go(key, lane, record, onDone)
      catch {
        case NonFatal(e) =>
          forgetIfIdle(key, lane)
          throw e
      }
    } else lane.waiting.enqueue((record, onDone))
  }

  /** How many records wait behind an earlier record of their partition key; for tests. */
  def heldBack: Int = synchronized(lanes.values.map(_.waiting.size).sum)

  override def outstandingRecords: Long = small.outstandingRecords + large.outstandingRecords

  override def destroy(): Unit =
    try small.destroy()
    finally large.destroy()

  private def isLarge(record: OutgoingRecord): Boolean = record.size > smallMaxBytes

  /** A large record goes alone; small ones may join small ones in flight, unless each key keeps strict order. */
  private def mayGo(lane: Lane, record: OutgoingRecord): Boolean =
    lane.inFlight == 0 || (!strictKeyOrder && !lane.inFlightLarge && !isLarge(record))

  /** Hands `record` to its producer; under the lock, so that no later record of its key can overtake it. */
  private def go(key: (String, String), lane: Lane, record: OutgoingRecord, onDone: SendResult => Unit): Unit = {
    val largeRecord = isLarge(record)
    lane.inFlight += 1 // before the call: a producer may confirm at once
    lane.inFlightLarge = largeRecord
    try {
      (if (largeRecord) large else small).send(
        record,
        result => {
          onDone(result)
          settled(key, lane)
        })
    } catch {
      case NonFatal(e) =>
        lane.inFlight -= 1
        throw e
    }
  }

  /** A record of `key` is confirmed or failed: lets go the records waiting for it, outside of any other lock. */
  private def settled(key: (String, String), lane: Lane): Unit = {
    val refused = mutable.Buffer.empty[(SendResult => Unit, String)]
    synchronized {
      lane.inFlight -= 1
      while (lane.waiting.nonEmpty && mayGo(lane, lane.waiting.head._1)) {
        val (record, onDone) = lane.waiting.dequeue()
        try go(key, lane, record, onDone)
        catch {
          case NonFatal(e) =>
            refused += ((
              onDone,
              s"Could not write a row to Kinesis stream '${record.stream}': the producer refused " +
                s"it (${e.getClass.getSimpleName}: ${e.getMessage}). The task fails and Spark retries it; rows it " +
                "had already written may be written twice (the sink delivers at least once)."))
        }
      }
      forgetIfIdle(key, lane)
    }
    refused.foreach { case (onDone, reason) => onDone(SendResult.Failed(reason)) }
  }

  private def forgetIfIdle(key: (String, String), lane: Lane): Unit =
    if (lane.inFlight == 0 && lane.waiting.isEmpty) lanes.remove(key)
}

private[sink] object RoutingProducer {

  /**
   * The largest record, partition key and data, sent through the KPL: its Java side refuses more than 1 MiB of data by
   * default (`maxUserRecordSize`), and its native process reads messages of at most 2 MiB from the JVM.
   */
  val KplMaxRecordBytes: Long = 1024L * 1024

  /** Threads for PutRecord calls per executor and producer settings; each holds one large record at a time. */
  val PutRecordThreads = 4
}
