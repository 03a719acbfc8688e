package io.github.sparkkinesis.source

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{MicroBatchStream, Offset, ReadLimit, SupportsAdmissionControl}
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{ClientSettings, HashKeyRange, KinesisClient, ShardDescription}
import io.github.sparkkinesis.metadata.{AtomicFiles, HadoopShardEndStore, ShardEndStore}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.options.KinesisSourceOptions

/**
 * The micro-batch source of one stream. The driver plans each batch from where the previous one ended (as
 * its tasks recorded in the [[ShardEndStore]]), discovers resharding by listing shards every
 * `kinesis.describeShardInterval`, and starts a batch only when some shard has new records.
 */
final class KinesisMicroBatchStream(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    hadoopConf: Configuration,
    clients: ClientSettings => KinesisClient,
    clock: () => Long = () => System.currentTimeMillis())
  extends MicroBatchStream with SupportsAdmissionControl {

  private val log = LoggerFactory.getLogger(getClass)
  private val stream = options.streamName
  private lazy val client = clients(options.client)
  private val store: ShardEndStore = new HadoopShardEndStore(
    options.metadataPath.getOrElse(new Path(checkpointLocation, "shard-ends").toString), hadoopConf)
  private lazy val probe = new NewRecordsProbe(client, stream, options.fetchIntervalMs, clock)

  private var listing: Seq[ShardDescription] = Nil
  private var listedAtMs = Long.MinValue / 2
  /** The positions after the batch of the last `latestOffset` start, cached: they cost a store read per shard. */
  private var basis: Option[(KinesisSourceOffset, KinesisSourceOffset)] = None

  override def initialOffset(): Offset = initial

  /** Resolved once per query and persisted, so a restart before the first batch keeps the same start. */
  private lazy val initial: KinesisSourceOffset = {
    val path = new Path(checkpointLocation, "initial-offset.json")
    def fresh = KinesisSourceOffset(-1L,
      Map(stream -> ShardTracker.initial(stream, options.startingPosition, shards(force = true), clock())))
    val json = AtomicFiles.read(path, hadoopConf).getOrElse {
      AtomicFiles.publishIfAbsent(path, fresh.json(), hadoopConf)
      AtomicFiles.read(path, hadoopConf).get
    }
    KinesisSourceOffset.fromJson(json)
  }

  override def latestOffset(): Offset = throw new UnsupportedOperationException(
    "the Kinesis source implements SupportsAdmissionControl; Spark calls latestOffset(start, limit)")

  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    val start = startOffset.asInstanceOf[KinesisSourceOffset]
    val next = positionsAfter(start)
    val reconciled = ShardTracker.reconcile(next.streams.getOrElse(stream, Map.empty), shards(force = false))
    val tracked = reconciled.shards -- handleLost(reconciled.lost)
    val (checked, hasNewRecords) = probe.check(tracked)
    if (hasNewRecords) next.copy(streams = Map(stream -> checked))
    // Nothing new. Before the first batch Spark treats any offset as new data (nothing is committed yet), so
    // answer "no offset" then; afterwards the unchanged start offset says the same.
    else if (start.batch < 0) null
    else start
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val offset = end.asInstanceOf[KinesisSourceOffset]
    val states = offset.streams.getOrElse(stream, Map.empty)
    val readable = offset.readableShards(stream)
    val ranges = if (options.dropMisroutedRecords) {
      val stale = !readable.forall(id => listing.exists(_.shardId == id))
      shards(force = stale).map(d => d.shardId -> d.hashKeyRange).toMap
    } else Map.empty[String, HashKeyRange]
    readable.map(id => ShardPartition(stream, id, offset.batch, states(id).position, ranges.get(id)): InputPartition)
      .toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = new ShardReaderFactory(
    ReaderSettings(options.client, options.recordsPerFetch, options.fetchIntervalMs, options.maxFetchRecordsPerShard,
      options.maxFetchTimePerShardMs, options.client.retry.baseDelayMs, options.client.retry.maxDelayMs,
      options.dropMisroutedRecords),
    store, clients)

  override def deserializeOffset(json: String): Offset = KinesisSourceOffset.fromJson(json)

  override def commit(end: Offset): Unit =
    store.purgeBefore(stream, end.asInstanceOf[KinesisSourceOffset].batch - KinesisMicroBatchStream.RetainedBatches)

  override def stop(): Unit = probe.close()

  override def getDefaultReadLimit: ReadLimit = ReadLimit.allAvailable()

  override def toString: String = s"KinesisMicroBatchStream[$stream]"

  /**
   * The offset of the batch after `start`'s: each shard that batch read moves to the end its tasks recorded.
   * A shard without a recorded end (its batch was never read to the end, say by a `limit` in
   * `foreachBatch`) is read again from the same place, so nothing is skipped.
   */
  private def positionsAfter(start: KinesisSourceOffset): KinesisSourceOffset = basis match {
    case Some((cachedStart, next)) if cachedStart == start => next
    case _ =>
      val shards = start.streams.getOrElse(stream, Map.empty)
      val moved = if (start.batch < 0) shards else shards ++ start.readableShards(stream).map { id =>
        val state = shards(id)
        id -> (store.get(stream, start.batch, id) match {
          case Some(record) if record.start == state.position => state.copy(position = record.end)
          case Some(record) => throw new IllegalStateException(
            s"The shard end recorded for batch ${start.batch} of shard $id (stream $stream) starts at " +
              s"${record.start}, but the checkpoint says ${state.position}: kinesis.metadataPath holds another " +
              "query's records. Give each query its own kinesis.metadataPath.")
          case None =>
            log.warn(s"No end was recorded for batch ${start.batch} of shard $id (stream $stream); the next " +
              s"batch reads it again from ${state.position}.")
            state
        })
      }
      val next = KinesisSourceOffset(start.batch + 1, Map(stream -> moved))
      basis = Some(start -> next)
      next
  }

  /** The stream's shards, listed again when `force`d or once `kinesis.describeShardInterval` has passed. */
  private def shards(force: Boolean): Seq[ShardDescription] = {
    val now = clock()
    if (force || now - listedAtMs >= options.describeShardIntervalMs) {
      listing = client.listShards(stream)
      listedAtMs = now
    }
    listing
  }

  /** Applies `kinesis.failOnDataLoss` to shards that expired before being read to their end. */
  private def handleLost(lost: Seq[String]): Seq[String] = {
    if (lost.nonEmpty) {
      val message = s"Shard(s) ${lost.mkString(", ")} of stream $stream expired or were deleted before they were " +
        "read to their end: their unread records are lost (the query was stopped, or fell behind, for longer " +
        "than the stream's retention period)."
      if (options.failOnDataLoss) {
        throw new IllegalStateException(s"$message Set kinesis.failOnDataLoss=false to go on without them.")
      }
      log.warn(s"$message Going on without them (kinesis.failOnDataLoss=false).")
    }
    lost
  }
}

object KinesisMicroBatchStream {
  /** Batches of shard-end records kept behind the last committed one, for inspection after a failure. */
  val RetainedBatches = 10L
}
