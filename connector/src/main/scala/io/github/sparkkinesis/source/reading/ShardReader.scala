package io.github.sparkkinesis.source.reading

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{KinesisClient, KinesisRecord, RecordBatch}
import io.github.sparkkinesis.metadata.{ReadStats, ShardEndRecord}
import io.github.sparkkinesis.offsets.ShardPosition
import io.github.sparkkinesis.offsets.ShardPosition.{compareSequenceNumbers, AfterSequenceNumber, ShardEnd}
import io.github.sparkkinesis.source.realtime.{ParkedReader, WarmKey, WarmShards}

/**
 * Reads one shard for one micro-batch. The first attempt decides where the batch ends (caught up with the tip, the
 * shard's end, or a record or time limit), and its task records that ([[TaskReader]]) once it has handed over every
 * row; any later attempt (a retry, a replay, a second evaluation, a speculative copy) is given that record (`recorded`)
 * and reads exactly the same records. Once read, [[endRecord]] says where it ended. A polling reader that handed every
 * row over leaves its pages in `warm` ([[WarmShards]]) for the shard's next task on this executor, which takes them
 * only if it starts exactly where this one ended: its iterator goes on (no GetShardIterator) and its first call waits
 * out what is left of the shard's read limit after the last page instead of being throttled at the batch boundary. Each
 * page is asked for within a share of its task's fetch `budget`, held until the page's rows are all handed over, so a
 * task reading many backlogged shards holds no more fetched data than one reading a few.
 */
final class ShardReader(
    partition: TaskShard,
    recorded: Option[ShardEndRecord],
    settings: ReaderSettings,
    client: KinesisClient,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep,
    warm: WarmShards = WarmShards.shared,
    budget: FetchBudget = FetchBudget.ofMicroBatchTask(() => 1))
    extends PartitionReader[InternalRow] {

  import partition.{batch, shardId, start, stream}
  import ShardReader.EmptyPagesPerTask

  private val log = LoggerFactory.getLogger(getClass)
  private val rows = new RowBuilder(stream, shardId, start)
  private val recordedEnd: Option[ShardPosition] = recorded.map { record =>
    if (record.start != start) {
      throw new IllegalStateException(
        s"The shard end recorded for batch $batch of shard $shardId (stream $stream) starts at ${record.start}, " +
          s"but this batch starts at $start: the metadata store holds another query's records. Give each query " +
          "a checkpoint location of its own (and, with kinesis.metadataPath, a metadata path of its own).")
    }
    record.end
  }

  /** Polling pages go on from batch to batch; a batch read's job and a subscription (kept by its own cache) do not. */
  private val warmKey = Some(WarmKey(settings, client, stream, shardId))
    .filter(_ => !settings.readsWholeRange && !settings.fanOut.contains(stream))
  private val parked = warmKey.flatMap(warm.take(_, start))
  private val pages: ShardPages = parked.map { p =>
    p.pages.takenOver()
    p.pages
  }.getOrElse(ShardPages.open(client, partition, settings, clock, sleep))

  /**
   * The shard's average record, by which pages are sized to their share: from its last page with records, else from the
   * pages this reader takes over, else from the driver ([[TaskShard.recordBytes]]). Rows are not counted: a page's rows
   * are built one record at a time as the task takes them, so only its bytes are held.
   */
  private var recordSize = parked.map(_.recordSize).filter(_ != RecordSize.Unknown)
    .orElse(partition.recordBytes.map(RecordSize.ofRecords(_, 1L)))
    .getOrElse(RecordSize.Unknown)

  /** The budget's share the last page was fetched within, held until its rows are all handed over. */
  private var reservation: Option[FetchBudget.Reservation] = None

  /**
   * The bytes a page needs to carry the shard's read rate (its cap, else Kinesis' limit) at one call per fetch
   * interval: a reader whose equal share holds that keeps up without a loan, so it never waits for one.
   */
  private val pageAtFullRate =
    PollingPages.readRate(settings.maxBytesPerSecondPerShard) * settings.fetchIntervalMs / 1000

  /** The calls the pages had made for earlier tasks, when taken over: this attempt counts only its own. */
  private val (callsBefore, throttledBefore) = (pages.getRecordsCalls, pages.throttledCalls)

  /** A duration of the executor's clock, never compared with a timestamp from elsewhere. */
  private val deadlineMs = clock() + settings.maxTimePerShardMs
  private val maxRecords = math.min(partition.read.maxRecords.getOrElse(Long.MaxValue), settings.maxRecordsPerShard)
  private val maxBytes = partition.read.maxBytes.getOrElse(Long.MaxValue)
  @volatile private var recordsRead = 0L
  @volatile private var bytesRead = 0L

  /** The service's time when it served the first page that had records: its last record's arrival plus the lag. */
  private var tipAtFirstPageMs: Option[Long] = None
  private var millisBehind = 0L

  /** Whether the last page found the shard's tip (MillisBehindLatest 0): its next page waits for no loan. */
  private var atTip = false
  private var stoppedWithMore = false
  private var boundReached = false
  private var lastArrivalMs: Option[Long] = None

  /** Empty pages with records ahead (MillisBehindLatest above 0) met before this attempt's first record. */
  private var emptyPages = 0
  private var buffered: Iterator[InternalRow] = Iterator.empty
  private var current: InternalRow = _

  /** Nothing to read where the driver found every record of the batch expired (kinesis.failOnDataLoss=false). */
  private var done = recordedEnd.contains(start) || partition.expired.contains(Expired.Whole)
  private var ended: Option[ShardEndRecord] = None

  /** The shard's hash key range when sub-records routed outside it are dropped (KCL's behaviour). */
  private val misrouted = if (settings.dropMisroutedRecords) partition.hashKeyRange else None

  override def next(): Boolean = {
    while (!buffered.hasNext && !done) {
      giveBackShare() // the last page's rows are all handed over
      fetchMore()
    }
    if (buffered.hasNext) {
      current = buffered.next()
      true
    } else {
      giveBackShare()
      finish()
      false
    }
  }

  override def get(): InternalRow = current

  /**
   * Hands the pages back: polling pages are parked for the shard's next task, and a subscription kept, only if this
   * reader read to its end. Pages park at their own position, which a replay may have read past its recorded end: a
   * task takes them only if it starts there.
   */
  override def close(): Unit = {
    giveBackShare()
    warmKey match {
      case Some(key) if ended.isDefined && !pages.isEnded =>
        warm.park(key, ParkedReader(pages, Vector.empty, pages.position, walked = 0L, recordSize))
      case _ => pages.close(handedOver = ended.isDefined)
    }
  }

  /** Where this attempt ended the shard: the record it was given, or the one its reading decided; None until read. */
  def endRecord: Option[ShardEndRecord] = ended

  /** This attempt's reading so far, for the Spark UI's task metrics ([[TaskMetrics]]). */
  override def currentMetricsValues(): Array[CustomTaskMetric] =
    TaskMetrics.values(recordsRead, bytesRead, calls, throttled)

  private def fetchMore(): Unit = recordedEnd match {
    case Some(end) => replayTowards(end)
    case None => readUntilStop()
  }

  /**
   * First attempt: read on until caught up with the tip, the shard's end, a limit, or (in a Trigger.AvailableNow run or
   * a batch read) the first record past its bound. Records that keep arriving while it reads belong to the next batch,
   * so a busy shard does not keep a task chasing the tip: "arrived while reading" is judged by the service's clock (the
   * first page's tip), never the executor's. Until it has read a record the attempt reads on through empty pages
   * whatever the time limit, but at most [[EmptyPagesPerTask]] of them: near the trim horizon AWS serves such pages for
   * many minutes. Past that budget it ends the shard at its start, with nothing read, and says so in the log; the
   * driver's check walks on from there, keeping its iterator from look to look, and moves the shard to
   * AT_SEQUENCE_NUMBER of the first record it reaches ([[NewRecordsProbe]]), where the next batch starts without
   * walking (no GetRecords iterator outlives 5 minutes, so none is kept in the shard's end record). A byte share
   * (`kinesis.maxBytesPerTrigger`) ends the shard before the first record that would pass it, the records after it
   * handed back to the pages, except the attempt's first record, which it always reads.
   */
  private def readUntilStop(): Unit = {
    val before = pages.position
    val remaining = math.min(math.min(maxRecords - recordsRead, roomByBytes), Int.MaxValue.toLong).toInt
    val limit = math.min(remaining, shareOfBudget(deadlineMs))
    pages.fetch(deadlineMs, limit) match {
      case None => stop(moreAvailable = true) // throttled, or paced, until the deadline: end the batch where we are
      case Some(page) =>
        keepWhatThePageHolds(page)
        atTip = caughtUp(page, limit)
        val (inBounds, beyond) = page.records.span(r =>
          partition.read.arrivedBeforeMs.forall(r.approximateArrivalTimestampMillis < _) &&
            partition.until.forall(_.admits(r.sequenceNumber)))
        val (kept, overBudget) = inBounds.splitAt(fittingBytes(inBounds))
        if (beyond.nonEmpty || overBudget.nonEmpty) {
          pages.rewind(kept.lastOption.fold(before)(r => AfterSequenceNumber(r.sequenceNumber)))
        }
        emit(kept)
        kept.lastOption.foreach(r => lastArrivalMs = Some(r.approximateArrivalTimestampMillis))
        millisBehind = page.millisBehindLatest
        if (recordsRead == 0 && page.records.isEmpty) emptyPages += 1
        if (tipAtFirstPageMs.isEmpty) {
          tipAtFirstPageMs = page.records.lastOption.map(_.approximateArrivalTimestampMillis + page.millisBehindLatest)
        }
        // A batch read has no recorded end to replay: it reads its whole range, up to its bound or the tip.
        val chasing = !settings.readsWholeRange &&
          kept.lastOption.exists(r => tipAtFirstPageMs.exists(r.approximateArrivalTimestampMillis >= _))
        if (overBudget.nonEmpty) stop(moreAvailable = true)
        else if (beyond.nonEmpty) {
          boundReached = true
          stop(moreAvailable = false)
        } else if (pages.isEnded || atTip) stop(moreAvailable = false)
        else if (recordsRead == 0 && emptyPages >= EmptyPagesPerTask) {
          log.info(s"Batch $batch, shard $shardId of stream $stream: $emptyPages empty pages from $start while " +
            s"MillisBehindLatest (${page.millisBehindLatest} ms) says records lie ahead; this task ends the shard " +
            "where it began, without data loss. The driver walks on and the next batch starts at the first record " +
            "it reaches. (MillisBehindLatest near the stream's retention period: the position is at the trim " +
            "horizon, where AWS answers with empty pages for many minutes.)")
          stop(moreAvailable = false)
        } else if (chasing || recordsRead >= maxRecords || bytesRead >= maxBytes ||
          (recordsRead > 0 && clock() >= deadlineMs)) {
          stop(moreAvailable = page.millisBehindLatest > 0) // a full page at lag 0 may be the tip: the driver looks
        }
    }
  }

  /** How many of `records`, from the first, fit in the byte share: all that do, and always the attempt's first. */
  private def fittingBytes(records: Seq[KinesisRecord]): Int =
    if (maxBytes == Long.MaxValue) records.size
    else {
      val totals = records.iterator.scanLeft(bytesRead)(_ + _.data.length).drop(1)
      totals.zipWithIndex.takeWhile { case (total, i) => total <= maxBytes || recordsRead + i == 0 }.size
    }

  /**
   * About how many records the rest of the byte share holds, by the average size read so far (one more, so a page
   * reaches the record that passes it): a page then need not fetch, and hand back, far more than the share.
   */
  private def roomByBytes: Long =
    if (maxBytes == Long.MaxValue || recordsRead == 0) Long.MaxValue
    else (maxBytes - bytesRead) / math.max(1L, bytesRead / recordsRead) + 1

  private def stop(moreAvailable: Boolean): Unit = {
    done = true
    stoppedWithMore = moreAvailable
  }

  /**
   * Later attempts: read exactly up to the recorded end, however long it takes. Where the driver found records of the
   * batch trimmed since and `kinesis.failOnDataLoss=false` let them go (`partition.expired`), it reads what is left;
   * otherwise records found missing fail the attempt. Empty pages do not end a replay, which must reach exactly its
   * recorded end: a walk past [[EmptyPagesPerTask]] of them is logged once, and it ends at that end, or at the first
   * record past it once retention has trimmed the end too (a loss, as above).
   */
  private def replayTowards(end: ShardPosition): Unit = {
    val limit = shareOfBudget(Long.MaxValue)
    val page = pages.fetch(Long.MaxValue, limit).get
    keepWhatThePageHolds(page)
    atTip = caughtUp(page, limit)
    if (recordsRead == 0 && page.records.isEmpty && page.millisBehindLatest > 0) {
      emptyPages += 1
      if (emptyPages == EmptyPagesPerTask) {
        log.info(s"Batch $batch, shard $shardId of stream $stream, read again towards its recorded end $end: " +
          s"$emptyPages empty pages from $start while MillisBehindLatest (${page.millisBehindLatest} ms) says " +
          "records lie ahead; walking on to the recorded end.")
      }
    }
    end match {
      case ShardEnd =>
        emit(page.records)
        done = pages.isEnded
        if (!done && page.records.isEmpty && page.millisBehindLatest == 0) missingEnd(end, "the shard is still open")
      case AfterSequenceNumber(last) =>
        val (within, beyond) = page.records.span(r => compareSequenceNumbers(r.sequenceNumber, last) <= 0)
        emit(within)
        done = within.lastOption.exists(_.sequenceNumber == last)
        if (!done && (beyond.nonEmpty || pages.isEnded || (page.records.isEmpty && page.millisBehindLatest == 0))) {
          if (partition.expired.isEmpty) missingEnd(end, "its last record is no longer where it was")
          done = true
        }
      case other =>
        throw new IllegalStateException(s"unexpected recorded end $other for shard $shardId of stream $stream")
    }
    if (done) checkCount(end)
  }

  /** A replay that reached its end with fewer records than recorded lost the oldest of them to retention. */
  private def checkCount(end: ShardPosition): Unit = recorded.filter(_.stats.isDefined).foreach { r =>
    if (recordsRead < r.recordCount) {
      val lost = s"${r.recordCount - recordsRead} of the ${r.recordCount} records it read are gone"
      if (partition.expired.isEmpty) missingEnd(end, lost)
      log.warn(s"Batch $batch, shard $shardId of stream $stream, read again after a restart: $lost (trimmed by the " +
        s"retention period), between $start and $end. Going on without them (kinesis.failOnDataLoss=false).")
    }
  }

  /**
   * Records for the next page: polling, as many as this reader's share of the task's budget holds at the shard's
   * average record, reserved once the call is due (so no loan waits out the shard's pacing; where pacing runs past
   * `deadlineMs` the share is reserved and the fetch answers None at once); a reader not known to be at its shard's
   * tip, whose equal share cannot carry the shard's rate, waits briefly for a whole loan. A subscription's page takes
   * what was pushed, all of it: its events arrived whole and are held whatever the page, and a smaller page would
   * misjudge the tip (a subscription's lag is its last event's).
   */
  private def shareOfBudget(deadlineMs: Long): Int =
    if (!pages.awaitNextCall(deadlineMs)) Int.MaxValue
    else {
      val needsLoan = !atTip && budget.equalShare.bytes < pageAtFullRate
      val r = budget.reserve(if (needsLoan) FetchBudget.LoanWaitMs else 0L)
      reservation = Some(r)
      r.share.records(recordSize, settings.recordsPerFetch)
    }

  /**
   * Once a page has come, gives back the part of its loan the page did not fill (pages at the tip are small), so that
   * readers waiting for a loan get one at once.
   */
  private def keepWhatThePageHolds(page: RecordBatch): Unit =
    reservation = reservation.map(budget.keepOnly(_, page.records.foldLeft(0L)(_ + _.data.length)))

  /**
   * Whether `page`, asked for with `limit`, found the shard's tip: MillisBehindLatest 0 on a page that is not full. A
   * full page may stop short of records that arrived in the same instant as its last (kinesis-mock counts the lag in
   * whole seconds from the shard's last record), so the next page says.
   */
  private def caughtUp(page: RecordBatch, limit: Int): Boolean =
    page.millisBehindLatest == 0 && page.records.size < limit

  /** Gives the last page's share back, its rows all handed over. */
  private def giveBackShare(): Unit = {
    reservation.foreach(budget.giveBack)
    reservation = None
  }

  private def emit(records: Seq[KinesisRecord]): Unit = {
    recordsRead += records.size
    val bytes = records.map(_.data.length.toLong).sum
    if (records.nonEmpty) recordSize = RecordSize.ofRecords(bytes, records.size.toLong)
    bytesRead += bytes
    pages.metrics.recordsRead.inc(records.size.toLong)
    pages.metrics.bytesRead.inc(bytes)
    buffered = records.iterator.flatMap(rows.rows(_, misrouted))
  }

  private def missingEnd(end: ShardPosition, why: String): Nothing =
    throw new IllegalStateException(
      s"Cannot re-read batch $batch of shard $shardId (stream $stream) from $start up to its recorded end $end: " +
        s"$why. Its records were lost since the batch was planned: trimmed by the stream's retention period (the " +
        "query was stopped for longer than that), or the stream was deleted and created again. Set " +
        "kinesis.failOnDataLoss=false and " +
        "restart the query on the same checkpoint to go on from the oldest retained record.")

  private def calls: Long = pages.getRecordsCalls - callsBefore
  private def throttled: Long = pages.throttledCalls - throttledBefore

  /** Where this attempt ended: the recorded end, or where its reading stopped and what it saw. */
  private def finish(): Unit = if (ended.isEmpty) {
    ended = recorded.orElse(Some(ShardEndRecord(
      stream,
      shardId,
      batch,
      start,
      pages.position,
      recordsRead,
      Some(ReadStats(
        millisBehind,
        stoppedWithMore,
        boundReached,
        lastArrivalMs,
        bytesRead,
        calls,
        throttled,
        pages.msUntilPaced)))))
  }
}

private[source] object ShardReader {

  /**
   * Most empty pages with records ahead a first attempt walks before its first record, whatever its time limit: about
   * 10 s at the default fetch interval, far below the minutes AWS can serve them near the trim horizon.
   */
  val EmptyPagesPerTask = 50
}
