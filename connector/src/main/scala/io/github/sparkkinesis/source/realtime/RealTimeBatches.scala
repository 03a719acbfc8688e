package io.github.sparkkinesis.source.realtime

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.planning.BatchEnds

/**
 * The real-time batches of a run, one at a time: each starts with the plan the stream made ([[RealTimePlan]]) and ends
 * where its tasks stopped, which is recorded for a later run ([[BatchEnds.recordRealTime]]).
 */
private[source] final class RealTimeBatches(ends: BatchEnds, options: KinesisSourceOptions) {
  private val log = LoggerFactory.getLogger(getClass)

  /** The last real-time batch's plan, and the shard-end records its tasks reported, by stream. */
  private var lastPlan: Option[RealTimePlan] = None
  private var lastEnds = Map.empty[String, Seq[ShardEndRecord]]

  /** When the last real-time batch's task offsets were merged, for the log of what a batch boundary costs. */
  private var mergedAtMs: Option[Long] = None

  /**
   * Starts the batch `plan` plans, made with `tasks` from `planningFrom` (ms) on, and returns its tasks; a batch with
   * no readable shard waits `kinesis.describeShardInterval` first, so that batches without tasks do not follow each
   * other at once.
   */
  def start(plan: RealTimePlan, tasks: RealTimeTasks, planningFrom: Long): Seq[RealTimePartition] = {
    if (lastPlan.isEmpty) {
      log.info(s"Real-time batches of this run: ${tasks.slots.slots} task slots, ${tasks.slots.downstream} of them " +
        s"for the query's shuffle stages, ${plan.partitions.size} Kinesis tasks in batch ${plan.batch}.")
    }
    if (plan.partitions.isEmpty) {
      log.info(s"Real-time batch ${plan.batch}: no shard is readable (every stream closed?); waiting " +
        s"${options.describeShardIntervalMs} ms (kinesis.describeShardInterval) before the batch ends.")
      Thread.sleep(options.describeShardIntervalMs)
    }
    lastPlan = Some(plan)
    val now = System.currentTimeMillis()
    log.info(s"Real-time batch ${plan.batch}: planned ${plan.partitions.size} task(s) in ${now - planningFrom} ms" +
      mergedAtMs.fold("")(at =>
        s", ${planningFrom - at} ms after the last batch's task offsets were merged " +
          "(Spark's offset and commit logs in between)") + ".")
    plan.partitions
  }

  /**
   * The end offset of the real-time batch last started, from where its tasks stopped; what they saw there is recorded
   * for a later run ([[BatchEnds.recordRealTime]]), whose trim horizon check needs to know whether records lay ahead.
   */
  def end(reports: Seq[RealTimeTaskOffset]): KinesisSourceOffset = {
    val plan = lastPlan.getOrElse(
      throw new IllegalStateException("Spark merged real-time task offsets before planning the batch"))
    lastEnds = plan.endsByStream(reports)
    ends.recordRealTime(plan.batch, reports.flatMap(_.ends))
    mergedAtMs = Some(System.currentTimeMillis())
    plan.endOffset(reports)
  }

  /** The shard-end records the tasks of the last ended real-time batch reported, by stream, for its metrics. */
  def endsByStream: Map[String, Seq[ShardEndRecord]] = lastEnds
}

private[source] object RealTimeBatches {

  /** Refuses the options that shape micro-batches only, which real-time mode cannot honour, saying what to do. */
  def checkOptions(options: KinesisSourceOptions): Unit = {
    val caps = Seq(
      options.maxRecordsPerTrigger.map(n => s"kinesis.maxRecordsPerTrigger ($n) caps the records"),
      options.maxBytesPerTrigger.map(n => s"kinesis.maxBytesPerTrigger ($n) caps the bytes")).flatten
    caps.headOption.foreach { cap =>
      throw new IllegalArgumentException(s"Option $cap of each micro-batch, but real-time mode (Trigger.RealTime) " +
        "hands records over as they arrive, in batches that end by time. Remove the option, or use a micro-batch " +
        "trigger.")
    }
  }
}
