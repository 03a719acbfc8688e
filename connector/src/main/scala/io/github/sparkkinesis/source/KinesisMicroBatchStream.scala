package io.github.sparkkinesis.source

import java.time.Instant

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{
  MicroBatchStream, Offset, ReadLimit, ReportsSourceMetrics, SupportsTriggerAvailableNow
}
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{ClientSettings, HashKeyRange, KinesisClient, ShardDescription}
import io.github.sparkkinesis.metadata.{AtomicFiles, HadoopShardEndStore, ShardEndRecord, ShardEndStore}
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardPosition, ShardRead, ShardState}
import io.github.sparkkinesis.options.KinesisSourceOptions

/**
 * The micro-batch source of one stream. The driver plans each batch from where the previous one ended (as its
 * tasks recorded in the [[ShardEndStore]]), discovers resharding by listing shards every
 * `kinesis.describeShardInterval`, and starts a batch only when some shard has new records; a batch reads only the
 * shards that have. How often each shard is looked at follows the [[PollSchedule]], which keeps the query inside
 * its GetRecords budget. With Trigger.AvailableNow, the run's target is fixed when it starts ([[AvailableNowTarget]])
 * and the run ends once every shard has reached it.
 */
final class KinesisMicroBatchStream(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    hadoopConf: Configuration,
    clients: ClientSettings => KinesisClient,
    clock: () => Long = () => System.currentTimeMillis())
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics {
  import KinesisMicroBatchStream.Moved

  private val log = LoggerFactory.getLogger(getClass)
  private val stream = options.streamName
  private lazy val client = clients(options.client)
  private val store: ShardEndStore = new HadoopShardEndStore(
    options.metadataPath.getOrElse(new Path(checkpointLocation, "shard-ends").toString), hadoopConf)
  private lazy val probe = new NewRecordsProbe(client, stream, options.driverRetryTimeoutMs, clock)
  private val listing = new ShardListing(() => client, stream, options.describeShardIntervalMs,
    options.driverRetryTimeoutMs, new Backoff(options.client.retry.baseDelayMs, options.client.retry.maxDelayMs), clock)
  // EFO hook: a shard read through a subscription costs no GetRecords, so a busy one is read again without a pause.
  private val schedule = new PollSchedule(if (options.fanOut.isDefined) 0L else options.fetchIntervalMs,
    options.idleShardCheckIntervalMs, clock)
  // EFO hook: the stream consumer tasks read through (kinesis.consumerType=SubscribeToShard), resolved on first use.
  private val fanOut = options.fanOut.map(f => new efo.FanOutConsumer(efo.FanOutClients.of(client), stream, f,
    new Path(checkpointLocation, s"efo-consumer-$stream"), hadoopConf, options.driverRetryTimeoutMs,
    new Backoff(options.client.retry.baseDelayMs, options.client.retry.maxDelayMs), clock))

  /** The positions after the batch of the last `latestOffset` start, cached: they cost a store read per shard. */
  private var basis: Option[(KinesisSourceOffset, Moved)] = None
  private var trimHorizonChecked = false
  private var checksReported = 0L
  private var lastEnds: Option[(Long, Seq[(String, Option[ShardEndRecord])])] = None
  private val reportedLost = scala.collection.mutable.Set.empty[String]
  /** The batch whose offset this run last handed to Spark. */
  private var lastPlanned: Option[Long] = None
  private var availableNow: Option[AvailableNowTarget] = None

  override def initialOffset(): Offset = initial

  /** Resolved once per query and persisted, so a restart before the first batch keeps the same start. */
  private lazy val initial: KinesisSourceOffset = {
    val path = new Path(checkpointLocation, "initial-offset.json")
    def fresh = KinesisSourceOffset(-1L,
      Map(stream -> ShardTracker.initial(stream, options.startingPosition, listing.current(force = true), clock())))
    val json = AtomicFiles.read(path, hadoopConf).getOrElse {
      AtomicFiles.publishIfAbsent(path, fresh.json(), hadoopConf)
      AtomicFiles.read(path, hadoopConf).get
    }
    KinesisSourceOffset.fromJson(json)
  }

  override def prepareForTriggerAvailableNow(): Unit = {
    val target = AvailableNowTarget.fixedAt(clock(), listing.current(force = true))
    log.info(s"Trigger.AvailableNow on stream $stream: this run reads the records that arrived before " +
      s"${Instant.ofEpochMilli(target.arrivedBeforeMs)} (Kinesis' arrival times, the driver's clock), and closed " +
      "shards to their end.")
    availableNow = Some(target)
  }

  override def latestOffset(): Offset = throw new UnsupportedOperationException(
    "the Kinesis source implements SupportsAdmissionControl; Spark calls latestOffset(start, limit)")

  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    val start = KinesisSourceOffset.of(startOffset)
    val moved = positionsAfter(start)
    val listed = listing.current(force = false)
    val reconciled = ShardTracker.reconcile(moved.offset.streams.getOrElse(stream, Map.empty), listed)
    val tracked = checkTrimHorizon(reconciled.shards -- handleLost(reconciled.lost), moved)
    schedule.retain(tracked.contains)
    val (checked, known) = availableNow.fold(look(tracked, moved)) { target =>
      Thread.sleep(schedule.msUntilDue(ShardState.readable(tracked).filterNot(target.reached)))
      definiteLook(target, tracked, moved)
    }
    val news = (known ++ checked.news).distinct.sorted
    val newlyFinished = checked.states.exists { case (id, state) => state.isFinished && !tracked(id).isFinished }
    if (news.nonEmpty || newlyFinished) {
      // A shard found read to its end is recorded even when nothing else is new, so it never later counts as lost.
      lastPlanned = Some(moved.offset.batch)
      moved.offset.copy(streams = Map(stream -> checked.states), reads = Some(Map(stream -> reads(news, limit))))
    } else if (start.batch < 0) {
      null // before the first batch Spark treats any offset as new data (nothing is committed yet)
    } else start
  }

  /**
   * One look at the readable shards that are due: those expected to have news count as news without a check, the
   * others are checked. Returns what the check found and the shards taken as news unchecked.
   */
  private def look(tracked: Map[String, ShardState], moved: Moved): (NewRecordsProbe.Checked, Seq[String]) = {
    val due = ShardState.readable(tracked).filter(id => schedule.isDue(id) && !availableNow.exists(_.reached(id)))
    val known = due.filter(moved.expectNews)
    val checked = probe.check(tracked, id => due.contains(id) && !known.contains(id),
      id => availableNow.flatMap(_.arrivedBefore(id)))
    availableNow match {
      case Some(target) => target.reach(checked.quiet)
      case None         => schedule.idle(checked.quiet)
    }
    schedule.idle(checked.unanswered)
    (checked, known)
  }

  /**
   * In an AvailableNow run "nothing new" ends the run, so it must be definite: wait until pacing allows a look at
   * every shard short of its target, and look again at shards whose check went unanswered (throttling, say), for
   * at most `kinesis.driverRetryTimeout`.
   */
  private def definiteLook(target: AvailableNowTarget, tracked: Map[String, ShardState],
      moved: Moved): (NewRecordsProbe.Checked, Seq[String]) = {
    val since = clock()
    val backoff = new Backoff(options.client.retry.baseDelayMs, options.client.retry.maxDelayMs)
    var result = look(tracked, moved)
    def undecided = result._2.isEmpty && result._1.news.isEmpty && result._1.unanswered.nonEmpty &&
      result._1.states == tracked
    while (undecided && clock() - since < options.driverRetryTimeoutMs) {
      val pacing = schedule.msUntilDue(ShardState.readable(tracked).filterNot(target.reached))
      Thread.sleep(math.max(backoff.nextDelayMs(), pacing))
      result = look(tracked, moved)
    }
    if (undecided) {
      throw new IllegalStateException(s"Trigger.AvailableNow on stream $stream: the checks of shard(s) " +
        s"${result._1.unanswered.toSeq.sorted.mkString(", ")} have gone unanswered (throttled, failing, or still " +
        s"walking empty pages) for ${clock() - since} ms (option kinesis.driverRetryTimeout), so the run cannot tell " +
        "whether it is complete. The driver's log has the errors.")
    }
    result
  }

  /**
   * The shard-end records of the batch ending at `offset`, per shard it read. The last batch's are kept once all
   * are there (metrics and the next batch's planning both need them); a missing one is looked for again next time.
   */
  private def endsOf(offset: KinesisSourceOffset): Seq[(String, Option[ShardEndRecord])] = lastEnds match {
    case Some((batch, ends)) if batch == offset.batch => ends
    case _ =>
      val ends = if (offset.batch < 0) Nil
        else offset.shardsRead(stream).map { case (id, _) => id -> store.get(stream, offset.batch, id) }
      if (ends.forall(_._2.isDefined)) lastEnds = Some(offset.batch -> ends)
      ends
  }

  /** The metrics of the latest batch, for its `StreamingQueryProgress` ([[SourceMetrics.ofBatch]]). */
  override def metrics(latestConsumedOffset: java.util.Optional[Offset]): java.util.Map[String, String] = {
    val metrics = if (!latestConsumedOffset.isPresent) Map.empty[String, String] else {
      val offset = KinesisSourceOffset.of(latestConsumedOffset.get)
      val checks = probe.getRecordsCalls
      val sinceLastReport = checks - checksReported
      checksReported = checks
      SourceMetrics.ofBatch(endsOf(offset).flatMap(_._2), offset.streams.getOrElse(stream, Map.empty)) +
        (SourceMetrics.DriverGetRecordsCalls -> sinceLastReport.toString)
    }
    val out = new java.util.HashMap[String, String]()
    metrics.foreach { case (k, v) => out.put(k, v) }
    out
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val offset = KinesisSourceOffset.of(end)
    val states = offset.streams.getOrElse(stream, Map.empty)
    val read = offset.shardsRead(stream)
    val ranges = if (options.dropMisroutedRecords) rangesOf(read.map(_._1)) else Map.empty[String, HashKeyRange]
    read.map { case (id, bounds) =>
      ShardPartition(stream, id, offset.batch, states(id).position, ranges.get(id), bounds): InputPartition
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = new ShardReaderFactory(
    ReaderSettings(options.client, options.recordsPerFetch, options.fetchIntervalMs, options.maxFetchRecordsPerShard,
      options.maxFetchTimePerShardMs, options.client.retry.baseDelayMs, options.client.retry.maxDelayMs,
      options.dropMisroutedRecords, fanOut.map(_.readerSettings)), // EFO hook: resolves (or registers) the consumer
    store, clients)

  override def deserializeOffset(json: String): Offset = KinesisSourceOffset.fromJson(json)

  override def commit(end: Offset): Unit =
    store.purgeBefore(stream, KinesisSourceOffset.of(end).batch - KinesisMicroBatchStream.RetainedBatches)

  override def stop(): Unit = {
    probe.close()
    fanOut.foreach(_.stop()) // EFO hook: deregisters a consumer this query registered, unless options keep it
  }

  override def getDefaultReadLimit: ReadLimit =
    options.maxRecordsPerTrigger.map(ReadLimit.maxRows).getOrElse(ReadLimit.allAvailable())

  override def toString: String = s"KinesisMicroBatchStream[$stream]"

  /**
   * The hash key ranges of the shards a batch reads, for `kinesis.deaggregation.dropMisroutedRecords`: every one is
   * needed, or this evaluation of the batch would keep sub-records that another evaluation drops.
   */
  private def rangesOf(shardIds: Seq[String]): Map[String, HashKeyRange] = {
    def known(listed: Seq[ShardDescription]) = listed.map(d => d.shardId -> d.hashKeyRange).toMap
    val cached = known(listing.current(force = false))
    val ranges = if (shardIds.forall(cached.contains)) cached else known(listing.current(force = true))
    shardIds.filterNot(ranges.contains) match {
      case Nil => ranges
      case missing => throw new IllegalStateException(s"Shard(s) ${missing.mkString(", ")} of stream $stream are not " +
        "in its listing, so kinesis.deaggregation.dropMisroutedRecords cannot tell which sub-records belong to " +
        "them; ListShards may be failing (see the driver's log).")
    }
  }

  /**
   * How the next batch reads each shard with news: its share of the read limit (the shares add up to the limit, or
   * to one record per shard when the batch reads more shards than that), and the AvailableNow bound.
   */
  private def reads(news: Seq[String], limit: ReadLimit): Map[String, ShardRead] = {
    val max = ReadLimits.maxRecords(limit)
    news.zipWithIndex.map { case (id, i) =>
      val share = max.map(m => math.max(1L, m / news.size + (if (i < m % news.size) 1 else 0)))
      id -> ShardRead(share, availableNow.flatMap(_.arrivedBefore(id)))
    }.toMap
  }

  /**
   * The offset of the batch after `start`'s: each shard that batch read moves to the end its tasks recorded.
   * A shard without a recorded end (its batch was never read to the end, say by a `limit` in
   * `foreachBatch`) is read again from the same place, so nothing is skipped.
   */
  private def positionsAfter(start: KinesisSourceOffset): Moved = basis match {
    case Some((cachedStart, moved)) if cachedStart == start => moved
    case _ =>
      val shards = start.streams.getOrElse(stream, Map.empty)
      val read = if (start.batch < 0) Nil else start.shardsRead(stream).map(_._1)
      val records = endsOf(start)
      val moved = shards ++ records.map { case (id, record) =>
        val state = shards(id)
        id -> (record match {
          case Some(r) if r.start == state.position => state.copy(position = r.end)
          case Some(r) => throw new IllegalStateException(
            s"The shard end recorded for batch ${start.batch} of shard $id (stream $stream) starts at " +
              s"${r.start}, but the checkpoint says ${state.position}: kinesis.metadataPath holds another " +
              "query's records. Give each query its own kinesis.metadataPath.")
          case None =>
            log.warn(s"No end was recorded for batch ${start.batch} of shard $id (stream $stream); the next " +
              s"batch reads it again from ${state.position}.")
            state
        })
      }
      // The batch that read these shards has ended: the next look at each waits from now. A shard that showed more
      // records coming is read again without a check (one call per look instead of two); in an AvailableNow run
      // every shard is looked at again as soon as pacing allows, since the run must finish.
      val expectNews = records.collect {
        case (id, Some(r)) if r.end != ShardPosition.ShardEnd &&
          (r.stats.exists(_.moreAvailable) || (availableNow.isEmpty && isStreaming(r))) => id
      }.toSet
      // Only for a batch this run planned: after a restart nobody knows when the last one ended, Trigger.Once gets
      // one look, and a bound reached in an earlier AvailableNow run says nothing about this run's.
      if (lastPlanned.contains(start.batch)) {
        availableNow.foreach(_.reach(records.collect { case (id, Some(r)) if r.stats.exists(_.boundReached) => id }))
        val (readOn, checkNext) = read.partition(id => expectNews(id) || availableNow.isDefined)
        schedule.readOn(readOn)
        schedule.idle(checkNext)
      }
      val next = Moved(KinesisSourceOffset(start.batch + 1, Map(stream -> moved)), expectNews,
        records.collect { case (id, Some(r)) => id -> r }.toMap)
      basis = Some(start -> next)
      next
  }

  /**
   * Whether a read that stopped at the tip saw a shard that is streaming: several records, the newest of them
   * younger than the idle interval. The driver's clock meets the service's here, which only decides whether a shard
   * is read again without a check first (cost, and rarely an empty batch), never which records a batch holds.
   */
  private def isStreaming(r: ShardEndRecord): Boolean =
    r.recordCount >= KinesisMicroBatchStream.StreamingRecords &&
      r.stats.flatMap(_.lastArrivalMs).exists(clock() - _ < options.idleShardCheckIntervalMs)

  /**
   * Once per query run: shards whose position lies behind the trim horizon go on from the oldest retained record
   * (where Kinesis would silently resume anyway). Where records were surely lost unread, `kinesis.failOnDataLoss`
   * decides; where that cannot be known, a warning says so ([[TrimHorizonCheck]]).
   */
  private def checkTrimHorizon(tracked: Map[String, ShardState], moved: Moved): Map[String, ShardState] =
    if (trimHorizonChecked) tracked
    else {
      trimHorizonChecked = true
      val unfinished = tracked.filterNot(_._2.isFinished)
      val oldest = probe.oldestRetained(TrimHorizonCheck.candidates(unfinished))
      val behind = TrimHorizonCheck.behind(unfinished, oldest, moved.lastRead)
      def shown(found: Seq[TrimHorizonCheck.Behind]) =
        found.map(b => s"${b.shardId} (read up to ${b.position}, oldest retained ${b.oldestRetained})").mkString(", ")
      val (lost, unknown) = behind.partition(_.surelyLost)
      if (unknown.nonEmpty) {
        log.warn(s"The last record read from shard(s) ${shown(unknown)} of stream $stream has expired. They were " +
          "caught up when last read, so records after it were lost only if some arrived and expired while the query " +
          "was stopped for longer than the stream's retention period. Going on from the oldest retained record.")
      }
      if (lost.nonEmpty) {
        dataLoss(s"The position of shard(s) ${shown(lost)} of stream $stream lies behind the trim horizon: records " +
          "after it expired unread (the query was stopped, or fell behind, for longer than the stream's retention " +
          "period).")
      }
      tracked ++ behind.map(b => b.shardId -> tracked(b.shardId).copy(position = ShardPosition.TrimHorizon))
    }

  /** Applies `kinesis.failOnDataLoss` to shards that expired before being read to their end. */
  private def handleLost(lost: Seq[String]): Seq[String] = {
    val unreported = lost.filterNot(reportedLost)
    reportedLost ++= unreported // until a batch moves past them, each call finds them again: say it once
    if (unreported.nonEmpty) {
      dataLoss(s"Shard(s) ${unreported.mkString(", ")} of stream $stream expired or were deleted before they were " +
        "read to their end: their unread records are lost (the query was stopped, or fell behind, for longer " +
        "than the stream's retention period).")
    }
    lost
  }

  private def dataLoss(message: String): Unit = {
    if (options.failOnDataLoss) {
      throw new IllegalStateException(s"$message Set kinesis.failOnDataLoss=false to go on without them.")
    }
    log.warn(s"$message Going on without them (kinesis.failOnDataLoss=false).")
  }
}

object KinesisMicroBatchStream {
  /**
   * A shard whose read stopped at the tip after this many Kinesis records, recent ones, is taken to be streaming: it
   * is read again without a check first. Below it, new records are not likely enough to risk an empty micro-batch.
   */
  val StreamingRecords = 5L

  /**
   * The offset after `start`'s batch, the shards expected to have news (read on without a check), and the shard-end
   * records of the shards that batch read.
   */
  private final case class Moved(
      offset: KinesisSourceOffset, expectNews: Set[String], lastRead: Map[String, ShardEndRecord])

  /** Batches of shard-end records kept behind the last committed one, for inspection after a failure. */
  val RetainedBatches = 10L
}
