package io.github.sparkkinesis.source.realtime

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

import io.github.sparkkinesis.client.{ClientSettings, KinesisClient}
import io.github.sparkkinesis.metadata.ShardEndStore
import io.github.sparkkinesis.source.reading.{ReaderSettings, TaskReaderFactory}

/**
 * A real-time task as Spark sees it: [[RealTimeRows]] behind Spark's real-time reader interface. Each row goes with its
 * record's Kinesis arrival time, for Spark's latency metrics. Spark 4.1 calls `nextWithTimeout(timeout)`, which waits
 * from now for at most the timeout; 4.2 and later `nextWithTimeout(startTime, timeout)`, which waits until the timeout
 * after `startTime` (Spark's clock, the wall clock), the instant Spark based the timeout on, at most.
 */
final class RealTimeTaskReader(rows: RealTimeRows) extends SupportsRealTimeRead[InternalRow] {

  override def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = status(rows.next(timeoutMs))

  /** Spark 4.2's abstract method (4.1 does not have it; defined here for both); a null start waits from now. */
  def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus =
    status(if (startTimeMs == null) rows.next(timeoutMs) else rows.next(startTimeMs, timeoutMs))

  override def getOffset: PartitionOffset = rows.offset

  /** Real-time partitions are read only by time: Spark never calls this in real-time mode. */
  override def next(): Boolean = throw new UnsupportedOperationException(
    "A Kinesis real-time partition is read with nextWithTimeout (Trigger.RealTime) only.")

  override def get(): InternalRow = rows.get()

  override def close(): Unit = rows.close()

  private def status(hasRecord: Boolean): RecordStatus =
    if (hasRecord) RecordStatus.newStatusWithArrivalTimeMs(rows.arrivalMs)
    else RecordStatus.newStatusWithoutArrivalTime(false)
}

/** Readers for real-time partitions, and micro-batch ones ([[TaskReaderFactory]]) for the rest. */
final class RealTimeReaderFactory(
    settings: ReaderSettings,
    store: ShardEndStore,
    clients: ClientSettings => KinesisClient)
    extends PartitionReaderFactory {
  private val microBatch = new TaskReaderFactory(settings, store, clients)

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = partition match {
    case p: RealTimePartition =>
      val attempt = Option(TaskContext.get()).fold(0)(_.attemptNumber())
      new RealTimeTaskReader(new RealTimeRows(p, settings, store, clients(settings.client), attempt = attempt))
    case other => microBatch.createReader(other)
  }
}
