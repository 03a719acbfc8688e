package io.github.sparkkinesis.source.planning

import java.time.Instant

import scala.collection.mutable

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{Backoff, HashKeyRange, KinesisClient, ShardDescription}
import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}
import io.github.sparkkinesis.options.KinesisSourceOptions

/**
 * The driver's view of one stream of a query: which shards it tracks (resharding and expiry, from a listing every
 * `kinesis.describeShardInterval`), when and how each is next looked at ([[PollSchedule]]), which have news
 * ([[NewRecordsProbe]]), and, in a Trigger.AvailableNow run, the run's target ([[AvailableNowTarget]]).
 *
 * Planning is a state machine. `KinesisMicroBatchStream` drives it: [[track]] and [[look]] plan each batch;
 * [[batchEnded]] follows once the batch's tasks recorded their ends, or [[resumedAfter]] for a batch an earlier run
 * planned; [[prepareForAvailableNow]] starts an AvailableNow run. Each tracked shard is in one of three states, held by
 * [[PollSchedule]] (its only owner), each but the first due at an instant of the driver's clock:
 *   - new: never looked at; due at once, and checked (one GetRecords call with limit 1);
 *   - checked next: the next look at it is a check;
 *   - expected: the next look reads it without a check (it counts as news), however many batches of other shards run in
 *     between.
 * Transitions:
 *   - a look ([[look]]) checks the due shards that are not expected: nothing new or no answer makes a shard due
 *     `kinesis.idleShardCheckInterval` later (an AvailableNow run instead counts a shard with nothing new as having
 *     reached its target, and looks no more at it); a walk on through empty pages, `kinesis.getRecords.fetchInterval`
 *     later; news leaves it to the batch;
 *   - a batch's end ([[batchEnded]]) makes each shard it read expected, due `kinesis.getRecords.fetchInterval` later,
 *     when its read expected more records ([[expected]]), else checked next, due `kinesis.idleShardCheckInterval` later
 *     (`kinesis.getRecords.fetchInterval` in an AvailableNow run, which must look again soon);
 *   - a resumed run ([[resumedAfter]]) makes the shards an earlier run's last batch expected more of expected, due as
 *     before (nobody knows when that batch ended);
 *   - a shard no longer tracked ([[track]]) is forgotten; a check of an expected shard (made only when a finished
 *     shard's children are checked in the same look) moves its due instant, not its state.
 * Per run: the first look checks every due shard, so a backlog is planned in one batch; without a read limit it checks
 * them a wave of `kinesis.checkNewRecordThreads` at a time until one has records, and takes the rest as news unchecked
 * (an empty stream is checked whole, and starts no batch); later looks check at most [[StreamPlanner.ChecksPerThread]]
 * per probe thread, the most overdue first, except in an AvailableNow run, where every look checks every due shard. The
 * first [[track]] of a run checks positions against the trim horizon.
 */
private[source] final class StreamPlanner(
    val stream: String,
    options: KinesisSourceOptions,
    client: () => KinesisClient,
    clock: () => Long) {
  import StreamPlanner._

  private val log = LoggerFactory.getLogger(getClass)
  private var probeStarted = false
  private lazy val probe = {
    probeStarted = true
    new NewRecordsProbe(client(), stream, options.driverRetryTimeoutMs, options.checkNewRecordThreads, clock)
  }
  private val listing = new ShardListing(
    client,
    stream,
    options.describeShardIntervalMs,
    options.driverRetryTimeoutMs,
    new Backoff(options.client.retry.baseDelayMs, options.client.retry.maxDelayMs),
    clock)
  // A shard read through an enhanced fan-out subscription costs no GetRecords: a busy one is read again at once.
  private val schedule = new PollSchedule(
    if (options.fanOut.isDefined) 0L else options.fetchIntervalMs,
    options.idleShardCheckIntervalMs,
    clock)
  private var trimHorizonChecked = false
  private val reportedLost = mutable.Set.empty[String]
  private var availableNow: Option[AvailableNowTarget] = None
  private var looked = false

  /** The shards the run's first look took as news unchecked: without a sample of their own, they get the stream's. */
  private var unaskedAtFirstLook = Set.empty[String]

  /**
   * Lists the stream's shards when the query starts (unless already listed), so that an endpoint that cannot be reached
   * fails the query then ([[ShardListing]]), while an outage after the start is ridden out: a restarted query's first
   * batch may be the replay of one planned before the restart, which lists nothing, and its progress report would
   * otherwise make this run's first listing whenever it comes.
   */
  def listAtStart(): Unit = listing.current(force = false)

  /** Where a query that starts reading this stream now starts in each shard (`kinesis.startingPosition`). */
  def initialShards(): Map[String, ShardState] =
    TrackedShards.initial(stream, options.startingPosition, listing.current(force = false), clock())

  def prepareForAvailableNow(): Unit = {
    val target = AvailableNowTarget.fixedAt(clock(), listing.current(force = true))
    log.info(s"Trigger.AvailableNow on stream $stream: this run reads the records that arrived before " +
      s"${Instant.ofEpochMilli(target.arrivedBeforeMs)} (Kinesis' arrival times, the driver's clock), and closed " +
      "shards to their end.")
    availableNow = Some(target)
  }

  def isAvailableNow: Boolean = availableNow.isDefined

  /** The AvailableNow bound of `shardId`: None outside such a run, and for shards read to their end. */
  def arrivedBefore(shardId: String): Option[Long] = availableNow.flatMap(_.arrivedBefore(shardId))

  /** The stream's shards as last listed: how many are open, how many closed (still retained). */
  def shardCounts: (Int, Int) = {
    val (closed, open) = listing.current(force = false).partition(_.isClosed)
    (open.size, closed.size)
  }

  /**
   * The shards the listing shows closed (listed again only once `kinesis.describeShardInterval` has passed): a fan-out
   * task checks such a shard's end itself, since kinesis-mock names no child shards.
   */
  def closedShards: Set[String] = listing.current(force = false).filter(_.isClosed).map(_.shardId).toSet

  /**
   * An iterator the last check of `shardId` found records with, which starts exactly at `position`, for the task that
   * reads the shard from there ([[NewRecordsProbe.iteratorAt]]); None where no such check was made in this run.
   */
  def checkedIterator(shardId: String, position: ShardPosition): Option[String] =
    if (probeStarted) probe.iteratorAt(shardId, position) else None

  /**
   * The data bytes of a record this run's checks found in `shardId`; for a shard the first look took unchecked, the
   * largest record the checks found in the stream ([[NewRecordsProbe.largestSampledRecordBytes]]): a stream's records
   * tend to be alike, and the largest keeps a first page within its share where they are not quite.
   */
  def sampledRecordBytes(shardId: String): Option[Long] =
    if (!probeStarted) None
    else probe.sampledRecordBytes(shardId).orElse {
      if (unaskedAtFirstLook(shardId)) probe.largestSampledRecordBytes else None
    }

  /** GetRecords calls the driver's checks of this stream have made. */
  def driverCalls: Long = if (probeStarted) probe.getRecordsCalls else 0L

  /**
   * The shards to track after a batch moved them to `moved`: in line with the listing (children of a reshard added,
   * expired shards dropped, lost ones reported under `kinesis.failOnDataLoss`), and once per run checked against the
   * trim horizon. `lastRead` are the shard-end records of the batch that moved them.
   */
  def track(moved: Map[String, ShardState], lastRead: Map[String, ShardEndRecord]): Map[String, ShardState] = {
    // A shard the cached listing does not know was found since (a real-time task went on into a reshard's child): only
    // a fresh listing can tell it from a shard that is gone.
    val cached = listing.current(force = false)
    val known = cached.map(_.shardId).toSet
    val current = if (moved.keys.forall(known)) cached else listing.current(force = true)
    val reconciled = TrackedShards.reconcile(moved, current)
    val tracked = checkTrimHorizon(reconciled.shards -- handleLost(reconciled.lost), lastRead)
    schedule.retain(tracked.contains)
    tracked
  }

  /**
   * One look at the readable shards that are due: the expected ones count as news without a check, the others are
   * checked, the most overdue first and at most [[ChecksPerThread]] per probe thread, so that planning a batch stays
   * quick with thousands of idle shards. The first look of a run checks every shard, so a backlog is planned in one
   * batch; with `untilNews` (no read limit to share out) it checks until a shard has records and takes the shards left
   * as news too, without a check each (a shard read empty costs its task the calls its check would have cost the
   * driver). Every look of an AvailableNow run checks every shard: it must not end while a shard is unchecked.
   */
  def look(tracked: Map[String, ShardState], untilNews: Boolean = false): Look = {
    val due = ShardState.readable(tracked).filter(id => schedule.isDue(id) && !availableNow.exists(_.reached(id)))
    val (expected, unchecked) = due.partition(schedule.isExpected)
    val first = !looked && availableNow.isEmpty && untilNews
    val cap = if (availableNow.isDefined || !looked) unchecked.size else ChecksPerThread * options.checkNewRecordThreads
    looked = true
    val toCheck = schedule.mostOverdue(unchecked, cap).toSet
    val checked = probe.check(tracked, toCheck, arrivedBefore, untilNews = first)
    if (first) unaskedAtFirstLook = checked.unasked
    availableNow match {
      case Some(target) => target.reach(checked.idle)
      case None => schedule.checkedIdle(checked.idle)
    }
    schedule.checkedIdle(checked.unanswered)
    schedule.checkedWalking(checked.walking) // a walk across empty pages goes on as soon as pacing allows
    Look(checked, expected)
  }

  /** How long until every readable shard short of the AvailableNow target may be looked at again. */
  def msUntilDue(tracked: Map[String, ShardState]): Long =
    schedule.msUntilDue(ShardState.readable(tracked).filterNot(id => availableNow.exists(_.reached(id))))

  /**
   * Whether the shard whose batch ended with `record` is expected, read again without a check first: its read stopped
   * with more records known to lie ahead, or (outside AvailableNow runs) at the tip of a streaming shard. Streaming is
   * several records, at least [[StreamPlanner.StreamingRecords]], the newest of them younger than the idle interval.
   * The driver's clock meets the service's here, which only decides whether a shard is read again without a check first
   * (cost, and rarely an empty batch), never which records a batch holds. Through a subscription records wait on the
   * executor until a task takes them, for a second or more when the driver checked first, so their age says nothing
   * about the shard; several records are enough there.
   */
  private def expected(record: ShardEndRecord): Boolean = {
    def streaming = record.recordCount >= StreamingRecords && (options.fanOut.isDefined ||
      record.stats.flatMap(_.lastArrivalMs).exists(clock() - _ < options.idleShardCheckIntervalMs))
    record.end != ShardPosition.ShardEnd &&
    (record.stats.exists(_.moreAvailable) || (availableNow.isEmpty && streaming))
  }

  /**
   * A batch this run planned, which read `read` and recorded `records`, has ended: the next look at each shard waits
   * from now, at least as long as the read-rate cap still held the shard back when its task stopped. The [[expected]]
   * shards are read again without a check; in an AvailableNow run every shard is looked at again as soon as pacing
   * allows, and shards whose read reached the run's bound are done.
   */
  def batchEnded(read: Seq[String], records: Map[String, ShardEndRecord]): Unit = {
    availableNow.foreach(_.reach(records.collect { case (id, r) if r.stats.exists(_.boundReached) => id }))
    schedule.batchEnded(
      read,
      id => records.get(id).exists(expected),
      checkSoon = availableNow.isDefined,
      pacedMs = id => records.get(id).flatMap(_.stats).fold(0L)(_.pacedMs))
  }

  /**
   * A run resumes after a batch an earlier run planned, which recorded `records`: its [[expected]] shards are read
   * again without a check (nobody knows when that batch ended, so pacing starts afresh).
   */
  def resumedAfter(records: Map[String, ShardEndRecord]): Unit =
    schedule.expect(records.collect { case (id, r) if expected(r) => id })

  /**
   * The hash key ranges of `shardIds`, for `kinesis.deaggregation.dropMisroutedRecords`: every one is needed, or this
   * evaluation of the batch would keep sub-records that another evaluation drops.
   */
  def rangesOf(shardIds: Seq[String]): Map[String, HashKeyRange] = {
    def rangesIn(listed: Seq[ShardDescription]) = listed.map(d => d.shardId -> d.hashKeyRange).toMap
    val cached = rangesIn(listing.current(force = false))
    val ranges = if (shardIds.forall(cached.contains)) cached else rangesIn(listing.current(force = true))
    shardIds.filterNot(ranges.contains) match {
      case Nil => ranges
      case missing => throw new IllegalStateException(s"Shard(s) ${missing.mkString(", ")} of stream $stream are not " +
          "in its listing, so kinesis.deaggregation.dropMisroutedRecords cannot tell which sub-records belong to " +
          "them; ListShards may be failing (see the driver's log).")
    }
  }

  /**
   * For a batch planned before a restart and read again ([[ReplayCheck]]): the oldest retained sequence number of each
   * of `shardIds`, None for a shard that has left the listing (expired whole); shards that do not answer are left out.
   */
  def horizons(shardIds: Seq[String]): Map[String, Option[String]] = {
    val listed = listing.current(force = true).map(_.shardId).toSet
    val (present, gone) = shardIds.partition(listed)
    probe.oldestRetained(present).map { case (id, seq) => id -> Option(seq) } ++ gone.map(_ -> None)
  }

  def close(): Unit = if (probeStarted) probe.close()

  /**
   * Once per query run: shards whose position lies behind the trim horizon go on from the oldest retained record (where
   * Kinesis would silently resume anyway). Where records were surely lost unread, `kinesis.failOnDataLoss` decides;
   * where that cannot be known, a warning says so ([[TrimHorizonCheck]]).
   */
  private def checkTrimHorizon(
      tracked: Map[String, ShardState],
      lastRead: Map[String, ShardEndRecord]): Map[String, ShardState] =
    if (trimHorizonChecked) tracked
    else {
      trimHorizonChecked = true
      val unfinished = tracked.filterNot(_._2.isFinished)
      val oldest = probe.oldestRetained(TrimHorizonCheck.candidates(unfinished))
      val behind = TrimHorizonCheck.behind(unfinished, oldest, lastRead)
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

private[source] object StreamPlanner {

  /**
   * A shard whose read stopped at the tip after this many Kinesis records, recent ones, is taken to be streaming: it is
   * expected, read again without a check first. Below it, new records are not likely enough to risk an empty
   * micro-batch.
   */
  val StreamingRecords = 5L

  /**
   * Most shards one look checks per probe thread (`kinesis.checkNewRecordThreads`), after a run's first look: a look
   * stays within a few hundred milliseconds on AWS however many shards are idle; the others stay due and are checked by
   * the next look.
   */
  val ChecksPerThread = 8

  /**
   * What one look found: the check's outcome, and the expected shards, which count as news without a check, as do the
   * shards the check left unasked.
   */
  final case class Look(checked: NewRecordsProbe.Checked, expected: Seq[String]) {
    def news: Seq[String] = (expected ++ checked.news ++ checked.unasked).distinct.sorted

    /** Nothing new and nothing decided: checks went unanswered, or are still walking empty pages. */
    def undecided(tracked: Map[String, ShardState]): Boolean = expected.isEmpty && checked.news.isEmpty &&
      (checked.unanswered.nonEmpty || checked.walking.nonEmpty) && checked.states == tracked
  }
}
