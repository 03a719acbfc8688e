package io.github.sparkkinesis.source

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{
  MicroBatchStream,
  Offset,
  ReadLimit,
  ReportsSourceMetrics,
  SupportsTriggerAvailableNow
}
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{Backoff, ClientSettings, HashKeyRange, KinesisClient}
import io.github.sparkkinesis.cloudwatch.ConsumerLagPublisher
import io.github.sparkkinesis.metadata.{AtomicFiles, ShardEndStore, ShardEndStores}
import io.github.sparkkinesis.metrics.{MetricNames, QueryMetrics}
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardPosition, ShardState}
import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.planning.{
  BatchEnds,
  FanOutConsumer,
  NextBatchStart,
  ReplayCheck,
  StreamChanges,
  StreamPlanner,
  TaskPlan
}
import io.github.sparkkinesis.source.reading.{Expired, FanOutClients, ReaderSettings, TaskReaderFactory}
import io.github.sparkkinesis.source.realtime.{
  BatchSlots,
  RealTimeBatches,
  RealTimePlan,
  RealTimeTaskOffset,
  RealTimeTasks
}

/**
 * The micro-batch source of one or several streams. The driver plans each batch from where the previous one ended (as
 * its tasks recorded in the metadata store, one record per task: [[BatchEnds]]), follows each stream's shards
 * ([[StreamPlanner]]), and starts a batch only when some shard has new records; a batch reads only the shards that
 * have, several per task ([[TaskPlan]]). With Trigger.AvailableNow, the run's target is fixed when it starts and the
 * run ends once every shard has reached it. On Spark 4.1 and later the same stream also runs in real-time mode
 * ([[startRealTime]], by the subclass that implements Spark's real-time interfaces).
 *
 * @param parallelism
 *   the cluster's cores when a batch is planned (Spark's default parallelism)
 * @param metadataOnExecutorDisks
 *   whether the metadata path is on a local disk while tasks run on other machines, so that the driver may never see
 *   what tasks record
 * @param executors
 *   the cluster's executors as task locations: with enhanced fan-out each shard's tasks prefer one of them, where the
 *   subscription the last task parked is waiting
 */
class KinesisMicroBatchStream(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    hadoopConf: Configuration,
    protected val clients: ClientSettings => KinesisClient,
    parallelism: () => Int = () => 1,
    clock: () => Long = () => System.currentTimeMillis(),
    metadataOnExecutorDisks: Boolean = false,
    executors: () => IndexedSeq[String] = () => IndexedSeq.empty)
    extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics {
  private val log = LoggerFactory.getLogger(getClass)
  private lazy val client = clients(options.client)
  protected val store: ShardEndStore = ShardEndStores.open(options, checkpointLocation, hadoopConf)
  private val planners = options.streams.map(s => s -> new StreamPlanner(s, options, () => client, clock)).toMap
  planners.values.foreach(_.listAtStart())
  private val ends = new BatchEnds(store)

  /** The query's metrics in Spark's metrics system, per stream; registered from now until [[stop]]. */
  private val queryMetrics = new QueryMetrics(MetricNames.currentQuery(), options.streams)

  /**
   * Per stream, the consumer tasks read through with kinesis.consumerType=SubscribeToShard, resolved (registered if
   * need be) in the background from the query's start; a failure there fails the next planning.
   */
  private val fanOut: Map[String, FanOutConsumer] = options.fanOut.fold(Map.empty[String, FanOutConsumer]) { f =>
    options.streams.map { s =>
      s -> new FanOutConsumer(
        FanOutClients.of(client),
        s,
        f,
        new Path(checkpointLocation),
        hadoopConf,
        options.driverRetryTimeoutMs,
        clock)
    }.toMap
  }
  fanOut.values.foreach(_.resolveInBackground())

  private var checksReported = 0L

  /** Publishes each batch's lag to CloudWatch, with kinesis.emitConsumerLagMetrics. */
  private val lagPublisher = ConsumerLagPublisher.of(options)

  /** The batch whose offset this run last handed to Spark. */
  private var lastPlanned: Option[Long] = None

  /** The batch another run planned that this run last planned again, and what of it had expired. */
  private var replayExpired: Option[(Long, Map[(String, String), Expired])] = None

  /** Where each batch starts, from where the one before ended. */
  private val nextBatchStart = new NextBatchStart(ends, store, planners, () => lastPlanned, metadataOnExecutorDisks)

  /** Whether the query runs in real-time mode ([[startRealTime]]), and its real-time batches. */
  private var realTime = false
  private val realTimeBatches = new RealTimeBatches(ends, options)

  override def initialOffset(): Offset = initial

  /** Resolved once per query and persisted, so a restart before the first batch keeps the same start. */
  private lazy val initial: KinesisSourceOffset = {
    val path = new Path(checkpointLocation, "initial-offset.json")
    def fresh = KinesisSourceOffset(-1L, planners.map { case (s, planner) => s -> planner.initialShards() })
    val json = AtomicFiles.read(path, hadoopConf).getOrElse {
      AtomicFiles.publishIfAbsent(path, fresh.json(), hadoopConf)
      AtomicFiles.read(path, hadoopConf).get
    }
    KinesisSourceOffset.fromJson(json)
  }

  override def prepareForTriggerAvailableNow(): Unit = planners.values.foreach(_.prepareForAvailableNow())

  override def latestOffset(): Offset = throw new UnsupportedOperationException(
    "the Kinesis source implements SupportsAdmissionControl; Spark calls latestOffset(start, limit)")

  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset =
    if (realTime) startOffset // a real-time batch's end is where its tasks stop: mergeRealTime
    else microBatchEnd(startOffset, limit)

  private def microBatchEnd(startOffset: Offset, limit: ReadLimit): Offset = {
    fanOut.values.foreach(_.checkResolution())
    val start = KinesisSourceOffset.of(startOffset)
    val moved = nextBatchStart.after(start)
    val (streams, changed) = StreamChanges.apply(moved.offset.streams, planners, options.allowStreamRemoval)
    val tracked = streams.map { case (s, shards) => s -> planners(s).track(shards, moved.lastRead(s)) }
    // Under a read limit a batch's shares go to every shard with news: a first look then checks every shard, so that
    // shards it would have taken unchecked (and found empty) take no share from those with records.
    val unlimited = ReadLimits.maxRecords(limit).isEmpty && ReadLimits.maxBytes(limit).isEmpty
    val looks =
      if (planners.values.exists(_.isAvailableNow)) definiteLook(tracked) else look(tracked, untilNews = unlimited)
    val states = looks.map { case (s, l) => s -> l.checked.states }
    val news = looks.toSeq.flatMap { case (s, l) => l.news.map(s -> _) }
    // Shards found read to their end, or moved past empty pages to their next record by a check's walk.
    val shifted = states != tracked
    if (news.nonEmpty || shifted || changed) {
      // A shard found read to its end is recorded even when nothing else is new, so it never later counts as lost;
      // a walk's end is recorded so that no later batch or run walks the same empty pages again; a stream added or
      // removed is recorded at once, so its starting positions are fixed.
      lastPlanned = Some(moved.offset.batch)
      val tasks = TaskPlan.taskCountAtOnce(news.size, options.shardsPerTask, parallelism())
      moved.offset.copy(
        streams = states,
        reads = Some(TaskPlan.reads(
          news,
          ReadLimits.maxRecords(limit),
          tasks,
          (s, id) => planners(s).arrivedBefore(id),
          homes.size,
          options.shardsPerTask,
          ReadLimits.maxBytes(limit))))
    } else if (start.batch < 0) {
      null // before the first batch Spark treats any offset as new data (nothing is committed yet)
    } else start
  }

  private def look(
      tracked: Map[String, Map[String, ShardState]],
      untilNews: Boolean = false): Map[String, StreamPlanner.Look] =
    tracked.map { case (s, shards) => s -> planners(s).look(shards, untilNews) }

  /**
   * In an AvailableNow run "nothing new" ends the run, so it must be definite: wait until pacing allows a look at every
   * shard short of its target, and look again while checks go unanswered (throttling, say), for at most
   * `kinesis.driverRetryTimeout` without an answer. A check that walked on through empty pages was answered: while
   * walks go on, the looks follow each other at the pace of reads and the timeout counts from the last such answer,
   * however many thousand empty pages a sparse shard needs before its first record.
   */
  private def definiteLook(tracked: Map[String, Map[String, ShardState]]): Map[String, StreamPlanner.Look] = {
    def pacing = tracked.map { case (s, shards) => planners(s).msUntilDue(shards) }.max
    var since = clock()
    val backoff = new Backoff(options.client.retry.baseDelayMs, options.client.retry.maxDelayMs)
    Thread.sleep(pacing)
    var looks = look(tracked)
    def undecided = looks.forall { case (s, l) => l.news.isEmpty && l.checked.states == tracked(s) } &&
      looks.exists { case (s, l) => l.undecided(tracked(s)) }
    def walking = looks.exists(_._2.checked.walking.nonEmpty)
    while (undecided && (walking || clock() - since < options.driverRetryTimeoutMs)) {
      if (walking) {
        since = clock()
        backoff.reset()
        Thread.sleep(pacing)
      } else Thread.sleep(math.max(backoff.nextDelayMs(), pacing))
      looks = look(tracked)
    }
    if (undecided) {
      val unanswered = looks.toSeq.flatMap { case (s, l) => l.checked.unanswered.toSeq.sorted.map(id => s"$s/$id") }
      throw new IllegalStateException(s"Trigger.AvailableNow: the checks of shard(s) ${unanswered.mkString(", ")} " +
        s"have gone unanswered (throttled or failing) for ${clock() - since} ms (option " +
        "kinesis.driverRetryTimeout), so the run cannot tell whether it is complete. The driver's log has the errors.")
    }
    looks
  }

  /**
   * The metrics of the latest batch, for its `StreamingQueryProgress` ([[SourceMetrics.ofBatch]]); the same batch's
   * figures go to Spark's metrics system ([[QueryMetrics]]).
   */
  override def metrics(latestConsumedOffset: java.util.Optional[Offset]): java.util.Map[String, String] = {
    val metrics = if (!latestConsumedOffset.isPresent) Map.empty[String, String]
    else {
      val offset = KinesisSourceOffset.of(latestConsumedOffset.get)
      val checks = planners.values.map(_.driverCalls).sum
      val sinceLastReport = checks - checksReported
      checksReported = checks
      val byStream = ends.of(offset).toSeq.flatMap { case ((s, _), record) => record.map(s -> _) }
        .groupBy(_._1).map { case (s, records) => s -> records.map(_._2) }
      val batchEnds = if (realTime) realTimeBatches.endsByStream else byStream
      val shardCounts = planners.map { case (s, planner) => s -> planner.shardCounts }
      queryMetrics.update(offset.batch, batchEnds, shardCounts, planners.map { case (s, p) => s -> p.driverCalls })
      val batch = SourceMetrics.ofBatch(batchEnds, shardCounts)
      lagPublisher.foreach(_.afterBatch(offset.batch, batch))
      batch + (SourceMetrics.DriverGetRecordsCalls -> sinceLastReport.toString)
    }
    val out = new java.util.HashMap[String, String]()
    metrics.foreach { case (k, v) => out.put(k, v) }
    out
  }

  /**
   * The tasks of the batch from `start` to `end`. Offsets are numbered by batch, so an `end` that is not after `start`
   * holds nothing to read (its tasks would read the batch that ended at `start` again): a backstop for offsets that
   * Spark finds unequal although they name the same batch, as a merge's out-of-order parents once made them.
   */
  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val (from, offset) = (KinesisSourceOffset.of(start), KinesisSourceOffset.of(end))
    if (offset.batch <= from.batch) {
      log.warn(s"Spark asked for the batch from offset ${from.batch} to offset ${offset.batch}, which is not after " +
        "it: nothing to read.")
      Array.empty
    } else {
      TaskPlan.partitions(
        offset,
        rangesOf,
        homes,
        expiredOf(offset),
        closedShards,
        checkedIterators(offset),
        recordBytes(from)).toArray[InputPartition]
    }
  }

  /**
   * The iterators the driver's checks found records with, for the polling tasks of a batch this run planned: each task
   * that starts where its shard's check found records reads from that check's iterator instead of getting one. A batch
   * planned by an earlier run has none (this run's checks were made elsewhere, if at all), and a subscription needs
   * none.
   */
  private def checkedIterators(offset: KinesisSourceOffset): (String, String, ShardPosition) => Option[String] =
    (stream, shardId, start) =>
      if (!lastPlanned.contains(offset.batch) || fanOut.contains(stream)) None
      else planners.get(stream).flatMap(_.checkedIterator(shardId, start))

  /**
   * Each shard's average record as the driver last saw it, by which a task sizes its first pages: the batch ending at
   * `from` read records of the shard (as planning it found them: a hint never reads the metadata store), or else what
   * this run's checks sampled ([[planning.StreamPlanner.sampledRecordBytes]]).
   */
  private def recordBytes(from: KinesisSourceOffset): (String, String) => Option[Long] = {
    val lastRead = ends.cached(from)
    (stream, shardId) =>
      lastRead.get((stream, shardId)).flatten.filter(_.recordCount > 0).flatMap(r =>
        r.stats.map(_.bytes / r.recordCount))
        .orElse(planners.get(stream).flatMap(_.sampledRecordBytes(shardId)))
  }

  /** A stream's shards' hash key ranges, when sub-records outside them are dropped. */
  private def rangesOf(stream: String, shardIds: Seq[String]): Map[String, HashKeyRange] =
    if (options.dropMisroutedRecords) planners.get(stream).map(_.rangesOf(shardIds)).getOrElse(Map.empty)
    else Map.empty

  /** The shards the driver's listing shows closed, which a fan-out task checks the end of itself. */
  private def closedShards(stream: String): Set[String] =
    if (fanOut.contains(stream)) planners.get(stream).fold(Set.empty[String])(_.closedShards) else Set.empty

  /**
   * Real-time mode from now on (Spark calls this before the query plans its first batch): batches are planned by
   * [[planRealTime]] and end where their tasks stop ([[mergeRealTime]]). Options that shape micro-batches only are
   * refused here, with what to do.
   */
  protected def startRealTime(): Unit = {
    RealTimeBatches.checkOptions(options)
    realTime = true
  }

  /**
   * The tasks of the real-time batch that starts at `start`: every readable shard from where the last batch left it,
   * the stream's shards listed afresh (children of a reshard added after their parents), read until the batch's time is
   * up ([[RealTimePlan]]). No shard is checked first: a real-time task waits on its shards for as long as it runs.
   */
  protected def planRealTime(start: Offset): Seq[InputPartition] = {
    val planningFrom = System.currentTimeMillis()
    fanOut.values.foreach(_.checkResolution())
    val moved = nextBatchStart.after(KinesisSourceOffset.of(start))
    val (streams, _) = StreamChanges.apply(moved.offset.streams, planners, options.allowStreamRemoval)
    val tracked = streams.map { case (s, shards) => s -> planners(s).track(shards, moved.lastRead(s)) }
    val tasks = RealTimeTasks(options.shardsPerTask, options.realTimeMaxTasks, batchSlots())
    val plan = RealTimePlan(moved.offset.batch, tracked, tasks, rangesOf, closedShards, executors())
    realTimeBatches.start(plan, tasks, planningFrom)
  }

  /**
   * The slots of the real-time batch being planned: here every core, with no shuffle stage; the stream that runs in
   * real-time mode asks Spark for the cluster's slots and the batch's shuffles.
   */
  protected def batchSlots(): BatchSlots = BatchSlots.stateless(parallelism())

  /** The end offset of the real-time batch last planned, from where its tasks stopped ([[RealTimeBatches.end]]). */
  protected def mergeRealTime(reports: Seq[RealTimeTaskOffset]): Offset = realTimeBatches.end(reports)

  /**
   * For a batch another run planned (the query stopped or crashed before committing it), what retention trimmed since
   * ([[ReplayCheck]]), decided once per run: records surely lost fail the query under `kinesis.failOnDataLoss=true`,
   * with a message saying what to do; with false they are logged, and the tasks read what is left, up to the recorded
   * ends, and go on from there. A batch this run planned is read as recorded.
   */
  private def expiredOf(offset: KinesisSourceOffset): Map[(String, String), Expired] = replayExpired match {
    case Some((batch, expired)) if batch == offset.batch => expired
    case _ if offset.batch < 0 || lastPlanned.contains(offset.batch) => Map.empty
    case _ =>
      val records = ends.of(offset)
      val horizons = ReplayCheck.candidates(offset, records).toSeq.flatMap { case (s, ids) =>
        planners.get(s).fold(Map.empty[String, Option[String]])(_.horizons(ids)).map { case (id, h) => (s, id) -> h }
      }.toMap
      val lost = ReplayCheck.lost(offset, records, horizons)
      if (lost.nonEmpty && options.failOnDataLoss) {
        throw new IllegalStateException(ReplayCheck.message(offset.batch, lost) + " Set kinesis.failOnDataLoss=false " +
          "and start the query again on the same checkpoint: it logs what was lost and goes on from the oldest " +
          "retained record.")
      }
      if (lost.nonEmpty) {
        log.warn(ReplayCheck.message(offset.batch, lost) + " Going on without them from the oldest retained record " +
          "(kinesis.failOnDataLoss=false).")
      }
      val gone = lost.map(l => (l.stream, l.shardId)).toSet
      val expired: Map[(String, String), Expired] = if (options.failOnDataLoss) Map.empty
      else records.keys.map(k => k -> (if (gone(k)) Expired.Whole else Expired.Start)).toMap
      replayExpired = Some(offset.batch -> expired)
      expired
  }

  /**
   * Where tasks should run: with enhanced fan-out, each shard on one executor batch after batch, so the next task takes
   * over the subscription the last one parked there instead of subscribing anew (which AWS refuses for 5 s while
   * another executor's subscription to the shard is open). Asked when a batch is planned and again when its tasks are:
   * if the executors changed in between (or a replay follows a restart), a task of shards that no longer share a home
   * prefers none, which costs a subscribe, never a record.
   */
  private def homes: IndexedSeq[String] = if (fanOut.isEmpty) IndexedSeq.empty else executors()

  override def createReaderFactory(): PartitionReaderFactory = new TaskReaderFactory(readerSettings, store, clients)

  /**
   * What every task reads with. In real-time mode, polling is paced by `kinesis.realTime.pollInterval` and a fan-out
   * reader checks whether its shard has closed every [[KinesisMicroBatchStream.RealTimeEndCheckMs]].
   */
  protected def readerSettings: ReaderSettings = ReaderSettings(
    options.client,
    options.recordsPerFetch,
    if (realTime) options.realTimePollIntervalMs else options.fetchIntervalMs,
    options.maxFetchRecordsPerShard,
    options.maxFetchTimePerShardMs,
    options.client.retry.baseDelayMs,
    options.client.retry.maxDelayMs,
    options.dropMisroutedRecords,
    fanOut = fanOut.map { case (s, consumer) => s -> consumer.readerSettings },
    fanOutEndCheckMs = if (realTime) Some(KinesisMicroBatchStream.RealTimeEndCheckMs) else None,
    failureTimeoutMs = options.driverRetryTimeoutMs,
    query = queryMetrics.query,
    maxBytesPerSecondPerShard = options.maxBytesPerSecondPerShard)

  override def deserializeOffset(json: String): Offset = KinesisSourceOffset.fromJson(json)

  override def commit(end: Offset): Unit =
    store.purgeBefore(KinesisSourceOffset.of(end).batch - KinesisMicroBatchStream.RetainedBatches)

  override def stop(): Unit = {
    planners.values.foreach(_.close())
    lagPublisher.foreach(_.stop())
    fanOut.values.foreach(_.stop()) // deregisters a consumer this query registered, unless options keep it
    queryMetrics.stop()
  }

  override def getDefaultReadLimit: ReadLimit =
    ReadLimits.default(options.maxRecordsPerTrigger, options.maxBytesPerTrigger)

  override def toString: String = s"KinesisMicroBatchStream[${options.streams.mkString(",")}]"
}

object KinesisMicroBatchStream {

  /** Batches of shard-end records kept behind the last committed one, for inspection after a failure. */
  val RetainedBatches = 10L

  /**
   * How often a real-time fan-out reader that is caught up checks whether its shard has closed (two calls): AWS names a
   * closed shard's children in its last event, the emulator never does.
   */
  val RealTimeEndCheckMs = 5000L
}
