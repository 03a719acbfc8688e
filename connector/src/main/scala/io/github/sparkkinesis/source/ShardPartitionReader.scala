package io.github.sparkkinesis.source

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader

import io.github.sparkkinesis.aggregation.{KplDeaggregator, UserRecord}
import io.github.sparkkinesis.client.{KinesisClient, KinesisRecord}
import io.github.sparkkinesis.metadata.{ReadStats, ShardEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, ShardEnd, compareSequenceNumbers}

/**
 * Reads one shard for one micro-batch. The first attempt decides where the batch ends (caught up with the
 * tip, the shard's end, or a record or time limit), and its task records that ([[TaskReader]]) once it has
 * handed over every row; any later attempt (a retry, a replay, a second evaluation, a speculative copy)
 * is given that record (`recorded`) and reads exactly the same records. Once read, [[endRecord]] says where it
 * ended.
 */
final class ShardPartitionReader(
    partition: ShardPartition,
    recorded: Option[ShardEndRecord],
    settings: ReaderSettings,
    client: KinesisClient,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep)
  extends PartitionReader[InternalRow] {

  import partition.{batch, shardId, start, stream}

  private val rows = new RowBuilder(stream, shardId)
  private val recordedEnd: Option[ShardPosition] = recorded.map { record =>
    if (record.start != start) {
      throw new IllegalStateException(
        s"The shard end recorded for batch $batch of shard $shardId (stream $stream) starts at ${record.start}, " +
          s"but this batch starts at $start: the metadata path holds another query's records. Give each query " +
          "its own kinesis.metadataPath (or leave it unset to keep it inside the checkpoint).")
    }
    record.end
  }
  private val fetcher: ShardPages = ShardPages.open(client, partition, settings, clock, sleep)
  /** A duration of the executor's clock, never compared with a timestamp from elsewhere. */
  private val deadlineMs = clock() + settings.maxTimePerShardMs
  private val maxRecords = math.min(partition.read.maxRecords.getOrElse(Long.MaxValue), settings.maxRecordsPerShard)
  @volatile private var recordsRead = 0L
  @volatile private var bytesRead = 0L
  /** The service's time when it served the first page that had records: its last record's arrival plus the lag. */
  private var tipAtFirstPageMs: Option[Long] = None
  private var millisBehind = 0L
  private var stoppedWithMore = false
  private var boundReached = false
  private var lastArrivalMs: Option[Long] = None
  private var buffered: Iterator[InternalRow] = Iterator.empty
  private var current: InternalRow = _
  private var done = recordedEnd.contains(start)
  private var ended: Option[ShardEndRecord] = None
  /** The shard's hash key range when sub-records routed outside it are dropped (KCL's behaviour). */
  private val misrouted = if (settings.dropMisroutedRecords) partition.hashKeyRange else None

  override def next(): Boolean = {
    while (!buffered.hasNext && !done) fetchMore()
    if (buffered.hasNext) {
      current = buffered.next()
      true
    } else {
      finish()
      false
    }
  }

  override def get(): InternalRow = current

  /** Hands the pages back; a subscription is kept for the next task only if this reader read to its end. */
  override def close(): Unit = fetcher.close(handedOver = ended.isDefined)

  /** Where this attempt ended the shard: the record it was given, or the one its reading decided; None until read. */
  def endRecord: Option[ShardEndRecord] = ended

  /** This attempt's reading so far, for the Spark UI's task metrics ([[SourceMetrics]]). */
  override def currentMetricsValues(): Array[CustomTaskMetric] =
    SourceMetrics.taskValues(recordsRead, bytesRead, fetcher.getRecordsCalls, fetcher.throttledCalls)

  private def fetchMore(): Unit = recordedEnd match {
    case Some(end) => replayTowards(end)
    case None      => readUntilStop()
  }

  /**
   * First attempt: read on until caught up with the tip, the shard's end, a limit, or (in a Trigger.AvailableNow
   * run or a batch read) the first record past its bound. Records that keep arriving while it reads belong to
   * the next batch, so a busy shard does not keep a task chasing the tip: "arrived while reading" is judged by the
   * service's clock (the first page's tip), never the executor's. Until it has read a record the attempt reads on
   * through empty pages however long that takes, since ending at its own start while records lie ahead would make
   * every later batch walk the same empty pages again.
   */
  private def readUntilStop(): Unit = {
    val before = fetcher.position
    val remaining = math.min(maxRecords - recordsRead, Int.MaxValue.toLong).toInt
    fetcher.fetch(deadlineMs, remaining) match {
      case None => stop(moreAvailable = true) // throttled until the deadline: end the batch where we are
      case Some(page) =>
        val (kept, beyond) = page.records.span(r =>
          partition.read.arrivedBeforeMs.forall(r.approximateArrivalTimestampMillis < _) &&
            partition.until.forall(_.admits(r.sequenceNumber)))
        if (beyond.nonEmpty) fetcher.rewind(kept.lastOption.fold(before)(r => AfterSequenceNumber(r.sequenceNumber)))
        emit(kept)
        kept.lastOption.foreach(r => lastArrivalMs = Some(r.approximateArrivalTimestampMillis))
        millisBehind = page.millisBehindLatest
        if (tipAtFirstPageMs.isEmpty) {
          tipAtFirstPageMs = page.records.lastOption.map(_.approximateArrivalTimestampMillis + page.millisBehindLatest)
        }
        // A batch read has no recorded end to replay: it reads its whole range, up to its bound or the tip.
        val chasing = !settings.readsWholeRange &&
          kept.lastOption.exists(r => tipAtFirstPageMs.exists(r.approximateArrivalTimestampMillis >= _))
        if (beyond.nonEmpty) {
          boundReached = true
          stop(moreAvailable = false)
        } else if (fetcher.isEnded || page.millisBehindLatest == 0) stop(moreAvailable = false)
        else if (chasing || recordsRead >= maxRecords || (recordsRead > 0 && clock() >= deadlineMs)) {
          stop(moreAvailable = true)
        }
    }
  }

  private def stop(moreAvailable: Boolean): Unit = {
    done = true
    stoppedWithMore = moreAvailable
  }

  /** Later attempts: read exactly up to the recorded end, however long it takes. */
  private def replayTowards(end: ShardPosition): Unit = {
    val batch = fetcher.fetchAll()
    end match {
      case ShardEnd =>
        emit(batch.records)
        done = fetcher.isEnded
        if (!done && batch.records.isEmpty && batch.millisBehindLatest == 0) missingEnd(end, "the shard is still open")
      case AfterSequenceNumber(last) =>
        val (within, beyond) = batch.records.span(r => compareSequenceNumbers(r.sequenceNumber, last) <= 0)
        emit(within)
        done = within.lastOption.exists(_.sequenceNumber == last)
        if (!done && (beyond.nonEmpty || fetcher.isEnded || (batch.records.isEmpty && batch.millisBehindLatest == 0))) {
          missingEnd(end, "its last record is no longer where it was")
        }
      case other =>
        throw new IllegalStateException(s"unexpected recorded end $other for shard $shardId of stream $stream")
    }
  }

  private def emit(records: Seq[KinesisRecord]): Unit = {
    recordsRead += records.size
    records.foreach(r => bytesRead += r.data.length)
    buffered = records.iterator.flatMap { record =>
      val users = KplDeaggregator.subRecords(record.data) match {
        case Some(subRecords) =>
          misrouted.fold(subRecords)(range => subRecords.filter(u => range.contains(KplDeaggregator.hashKey(u))))
        case None             => UserRecord(record.data, record.partitionKey, None, 0L) :: Nil
      }
      users.iterator.map(rows.row(record, _))
    }
  }

  private def missingEnd(end: ShardPosition, why: String): Nothing =
    throw new IllegalStateException(
      s"Cannot re-read batch $batch of shard $shardId (stream $stream) up to its recorded end $end: $why. " +
        "Records were lost (trimmed by the retention period?) or the stream was recreated.")

  /** Where this attempt ended: the recorded end, or where its reading stopped and what it saw. */
  private def finish(): Unit = if (ended.isEmpty) {
    ended = recorded.orElse(Some(ShardEndRecord(stream, shardId, batch, start, fetcher.position, recordsRead,
      Some(ReadStats(millisBehind, stoppedWithMore, boundReached, lastArrivalMs, bytesRead, fetcher.getRecordsCalls,
        fetcher.throttledCalls)))))
  }
}
