package io.github.sparkkinesis.bench

import java.util.Locale

import scala.concurrent.duration._

import org.apache.spark.sql.SparkSession
import software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest

import io.github.sparkkinesis.it.TestStreams

/**
 * Real-time mode (`--only realtime`, Spark 4.1+) against micro-batch on one emulator: put-to-row latency at the latency
 * part's pace on `--realtime-shards` shards (micro-batch with the default trigger, real-time with long and short
 * batches, all polling with default options and the same `foreach` sink); the drain of the drain part's backlog by the
 * raw client, a micro-batch query and a real-time query; and fan-out's real-time latency against a plain
 * SubscribeToShard client. Prints figures; fails only when a reader misses or repeats a record.
 */
object RealTimeBench {

  def run(spark: SparkSession, config: BenchConfig, log: String => Unit): String = {
    val rt = config.copy(latencyShards = config.realtimeShards)
    val long = RealTimeQueries.realTime(config.realtimeBatch)
    val short = config.realtimeShortBatch.filter(_.nonEmpty)
    log("realtime: latency, micro-batch (default trigger)")
    val microBatch = RealTimeLatency.run(spark, rt, "micro-batch", None, config.latencyOptions, None)
    log(s"realtime: latency, real-time (${config.realtimeBatch} batches)")
    val realTime = RealTimeLatency.run(spark, rt, "real-time", Some(long), config.latencyOptions, None)
    // Short batches: each waits for the end of a batch after the measured time, for its progress report.
    def shortBatches(name: String, options: Map[String, String]) = short.map { batch =>
      log(s"realtime: latency, $name ($batch batches)")
      val within = Duration(batch) + 30.seconds
      RealTimeLatency.run(
        spark,
        rt,
        s"$name short",
        Some(RealTimeQueries.realTime(batch)),
        options,
        Some(FiniteDuration(within.toMillis, MILLISECONDS)))
    }
    val realTimeShort = shortBatches("real-time", config.latencyOptions)
    log(s"realtime: drain, filling ${config.shards} shards with ${config.aggregates} aggregates")
    val backlog = Backlog.fill(config)
    System.gc()
    val raw = RawDrain.run(backlog, config.rawThreads)
    if (raw.userRecords != backlog.userRecords) {
      throw new IllegalStateException(s"the raw client read ${raw.userRecords} of ${backlog.userRecords} user records")
    }
    log(f"realtime: raw client done in ${raw.seconds}%.2f s; micro-batch reading")
    System.gc()
    val mbDrain = ConnectorDrain.run(spark, backlog, config.drainOptions, config.drainTimeoutSec.seconds)
    log(f"realtime: micro-batch done in ${mbDrain.total.seconds}%.2f s; real-time reading")
    System.gc()
    val rtOptions = realTimeDrainOptions(config)
    val rtDrain = RealTimeDrain.run(spark, backlog, rtOptions, config.realtimeBatch, config.drainTimeoutSec.seconds)
    log(f"realtime: real-time done in ${rtDrain.total.seconds}%.2f s")
    TestStreams.client.deleteStream(DeleteStreamRequest.builder().streamName(backlog.stream).build())
    log("realtime: fan-out latency, real-time")
    val efo = RealTimeLatency.run(
      spark,
      rt,
      "real-time fan-out",
      Some(long),
      config.latencyOptions ++ EfoBench.efoOptions("bench-rt-efo"),
      None)
    val efoShort = shortBatches("real-time fan-out", config.latencyOptions ++ EfoBench.efoOptions("bench-rt-efo-short"))
    log("realtime: fan-out latency, micro-batch (default trigger)")
    val efoMicroBatch = RealTimeLatency.run(
      spark,
      rt,
      "micro-batch fan-out",
      None,
      config.latencyOptions ++ EfoBench.efoOptions("bench-mb-efo"),
      None)
    log("realtime: fan-out latency, raw SubscribeToShard client")
    val rawEfo = RawSubscribeLatency.run(rt)
    report(
      rt,
      Latencies(microBatch, realTime, realTimeShort, efo, efoShort, efoMicroBatch, rawEfo),
      backlog,
      raw,
      mbDrain,
      rtDrain,
      rtOptions)
  }

  /**
   * The drain part's options, and real-time's poll interval at the drain part's 50 ms fetch interval (the emulator has
   * no per-shard call limit, and neither the raw client nor the micro-batch query waits longer between calls).
   */
  def realTimeDrainOptions(config: BenchConfig): Map[String, String] =
    Map("kinesis.realTime.pollInterval" -> "50") ++ config.drainOptions

  private final case class Latencies(
      microBatch: RealTimeLatencyResult,
      realTime: RealTimeLatencyResult,
      realTimeShort: Option[RealTimeLatencyResult],
      efo: RealTimeLatencyResult,
      efoShort: Option[RealTimeLatencyResult],
      efoMicroBatch: RealTimeLatencyResult,
      rawEfo: Seq[Long])

  private def report(
      config: BenchConfig,
      l: Latencies,
      backlog: Backlog,
      raw: DrainResult,
      mb: ConnectorDrainResult,
      rt: RealTimeDrainResult,
      rtOptions: Map[String, String]): String = {
    def f(d: Double, decimals: Int) = String.format(Locale.ROOT, s"%.${decimals}f", Double.box(d))
    def latencyRow(name: String, values: Seq[Long], calls: String, duplicates: Int) = {
      val s = values.sorted
      f"$name%-44s ${s.size}%8d ${Report.pct(s, 50)}%7s ${Report.pct(s, 95)}%7s ${Report.pct(s, 99)}%7s " +
        f"${s.lastOption.fold("-")(_.toString)}%7s $calls%12s $duplicates%5d"
    }
    def row(name: String, r: RealTimeLatencyResult) =
      latencyRow(name, r.latenciesMs, r.callsPerShardPerSecond.fold("-")(f(_, 2)), r.duplicates)
    def drainRow(name: String, r: DrainResult) =
      f"$name%-44s ${f(r.seconds, 2)}%9s ${f(r.userRecordsPerSecond, 0)}%12s " +
        f"${f(100 * r.userRecordsPerSecond / raw.userRecordsPerSecond, 0)}%6s%% " +
        f"${f(100 * r.userRecordsPerSecond / mb.total.userRecordsPerSecond, 0)}%6s%%"
    def p99(values: Seq[Long]) = values.sorted.apply(math.max(0, math.ceil(0.99 * values.size).toInt - 1)).toDouble
    val opts = if (config.latencyOptions.isEmpty) "defaults" else config.latencyOptions.toSeq.sorted.mkString(", ")
    val shortName = config.realtimeShortBatch.filter(_.nonEmpty).fold("")(b => s"real-time polling, $b batches")
    (Seq(
      "",
      s"== Real-time latency: ${config.latencyShards} shards, one record every ${config.latencyIntervalMs} ms for " +
        s"${config.latencySeconds} s, put to the foreach sink's process(); connector options: $opts",
      f"${"query"}%-44s ${"samples"}%8s ${"p50"}%7s ${"p95"}%7s ${"p99"}%7s ${"max"}%7s ${"GetRec/s/sh"}%12s " +
        f"${"dups"}%5s",
      row("micro-batch polling, default trigger", l.microBatch),
      row(s"real-time polling, ${config.realtimeBatch} batches", l.realTime)) ++
      l.realTimeShort.map(row(shortName, _)).toSeq ++ Seq(
        row(s"real-time fan-out, ${config.realtimeBatch} batches", l.efo)) ++
      l.efoShort.map(row(shortName.replace("polling", "fan-out"), _)).toSeq ++ Seq(
        row("micro-batch fan-out, default trigger", l.efoMicroBatch),
        latencyRow("raw SDK SubscribeToShard client (to receipt)", l.rawEfo, "0", 0)) ++
      (l.realTimeShort.toSeq ++ l.efoShort).map(r =>
        s"   ${r.name}: Spark's durationMs per batch (median of ${r.reports}): " +
          r.durationsMs.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", ")) ++ Seq(
        s"   real-time p99 / micro-batch p99: ${f(p99(l.realTime.latenciesMs) / p99(l.microBatch.latenciesMs), 2)}" +
          l.realTimeShort.fold("")(s =>
            s" (short batches: ${f(p99(s.latenciesMs) / p99(l.microBatch.latenciesMs), 2)})"),
        "   GetRec/s/sh: GetRecords calls (tasks and driver) per shard per second from the source's progress " +
          "metrics; '-' where no batch ended while measured (a real-time batch reports when it ends)",
        "",
        s"== Real-time drain: ${backlog.stream}: ${backlog.shardIds.size} shards, ${backlog.userRecords} user " +
          s"records in ${backlog.aggregates} KPL aggregates; micro-batch options " +
          config.drainOptions.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", ") + "; real-time options " +
          rtOptions.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", ") +
          s"; real-time batch ${config.realtimeBatch}",
        f"${"reader"}%-44s ${"seconds"}%9s ${"user rec/s"}%12s ${"vs raw"}%7s ${"vs mb"}%7s",
        drainRow(s"raw SDK v2 client, ${config.rawThreads} thread(s)", raw),
        drainRow("micro-batch, from start()", mb.total),
        drainRow("micro-batch, from first batch", mb.afterStart),
        drainRow("real-time, from start()", rt.total),
        drainRow("real-time, from first row", rt.afterStart),
        s"   micro-batch: ${mb.batches} batch(es), first batch after ${f(mb.startSeconds, 2)} s; real-time: first " +
          s"row after ${f(rt.firstRowSeconds, 2)} s")).mkString("\n")
  }
}
