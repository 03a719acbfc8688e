package io.github.sparkkinesis.source.realtime

import org.apache.spark.sparkkinesis.RealTimeBatchSlots
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{Offset, PartitionOffset, SupportsRealTimeMode}

import io.github.sparkkinesis.source.KinesisMicroBatchStream

/**
 * The Kinesis stream on Spark 4.1 and later: micro-batches as [[KinesisMicroBatchStream]] reads them, and real-time
 * mode (`Trigger.RealTime`), whose long-running tasks hand each record over as it arrives and report where they stopped
 * when the batch's time is up; the driver merges those positions into the batch's end offset.
 */
final class KinesisRealTimeStream(args: StreamArgs)
    extends KinesisMicroBatchStream(
      args.options,
      args.checkpointLocation,
      args.hadoopConf,
      args.clients,
      args.parallelism,
      metadataOnExecutorDisks = args.metadataOnExecutorDisks,
      executors = args.executors)
    with SupportsRealTimeMode {

  override def prepareForRealTimeMode(): Unit = startRealTime()

  override def planInputPartitions(start: Offset): Array[InputPartition] = planRealTime(start).toArray

  /** The cluster's slots and the batch's shuffles as Spark's scheduler will count them ([[RealTimeBatchSlots]]). */
  override protected def batchSlots(): BatchSlots = RealTimeBatchSlots.of(SparkSession.active.sparkContext)

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset =
    mergeRealTime(offsets.toSeq.map {
      case o: RealTimeTaskOffset => o
      case other => throw new IllegalArgumentException(s"not a Kinesis real-time task offset: $other")
    })

  override def createReaderFactory(): PartitionReaderFactory =
    new RealTimeReaderFactory(readerSettings, store, clients)
}
