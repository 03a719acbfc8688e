package io.github.sparkkinesis.bench

import java.util.Locale

/** The printed figures: a drain table (raw client against connector), a latency table and a sink table. */
object Report {

  def drain(config: BenchConfig, backlog: Backlog, raw: DrainResult, connector: ConnectorDrainResult): String = {
    val header = f"${"reader"}%-38s ${"seconds"}%9s ${"user rec/s"}%12s ${"Kinesis rec/s"}%14s ${"vs raw"}%7s"
    def row(name: String, r: DrainResult): String =
      f"$name%-38s ${fmt(r.seconds, 2)}%9s ${grouped(r.userRecordsPerSecond)}%12s " +
        f"${grouped(r.kinesisRecordsPerSecond)}%14s " +
        f"${percent(r.userRecordsPerSecond / raw.userRecordsPerSecond)}%7s"
    Seq(
      "",
      s"== Drain: ${backlog.stream}: ${backlog.shardIds.size} shards, ${backlog.aggregates} KPL aggregates of " +
        s"${config.userRecordsPerAggregate} user records x ${config.payloadBytes} B = " +
        s"${grouped(backlog.userRecords.toDouble)} " +
        s"user records, ${fmt(backlog.bytes / 1048576.0, 1)} MiB",
      s"   filled in ${fmt(backlog.fillSeconds, 1)} s (${grouped(backlog.aggregates / backlog.fillSeconds)} " +
        s"aggregates/s); " +
        s"connector options: ${config.drainOptions.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", ")}",
      header,
      row(s"raw SDK v2 client, ${config.rawThreads} thread(s)", raw),
      row("connector local[2], from start()", connector.total),
      row("connector local[2], from first batch", connector.afterStart),
      s"   connector: query start to first batch ${fmt(connector.startSeconds, 2)} s; ${connector.batches} " +
        s"batch(es); " +
        s"raw read ${grouped(raw.userRecords.toDouble)} user / ${grouped(raw.kinesisRecords.toDouble)} Kinesis " +
        s"records, " +
        s"mean ${raw.meanShardMs} ms per shard",
      s"   connector batches: ${connector.progress}",
      s"   connector tasks: ${connector.tasks}").mkString("\n")
  }

  /** One line per shard count of the drain runs: the connector's rate over the raw client's of the same run. */
  def drainSummary(runs: Seq[(Int, (Double, Double))]): String =
    ("" +: "== Drain, connector over raw client of the same run, by shard count:" +: runs.map {
      case (shards, (fromStart, fromFirstBatch)) =>
        f"   $shards%5d shards: from start() ${fmt(fromStart, 2)}, from first batch ${fmt(fromFirstBatch, 2)}"
    }).mkString("\n")

  def latency(config: BenchConfig, result: LatencyResult): String = {
    val sorted = result.latenciesMs.sorted
    val puts = result.putCallMs.sorted
    val header = f"${"put-to-sink latency (ms)"}%-26s ${"samples"}%8s ${"p50"}%7s ${"p95"}%7s ${"p99"}%7s ${"max"}%7s"
    def row(name: String, values: Seq[Long]): String =
      f"$name%-26s ${values.size}%8d ${pct(values, 50)}%7s ${pct(values, 95)}%7s ${pct(values, 99)}%7s " +
        f"${values.lastOption.fold("-")(_.toString)}%7s"
    Seq(
      "",
      s"== Latency: ${result.stream}: ${config.latencyShards} shards, one record every ${config.latencyIntervalMs} " +
        s"ms " +
        s"for ${config.latencySeconds} s (${result.sent} sent, ${result.latenciesMs.size} received, " +
        s"${result.batches} batches); default trigger; connector options: " +
        (if (config.latencyOptions.isEmpty) "defaults"
         else config.latencyOptions.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", ")),
      header,
      row("put-to-sink", sorted),
      row("(of which the PutRecord call)", puts),
      s"   GetRecords calls per shard per second (tasks and driver checks, from the source's progress metrics): " +
        fmt(result.getRecordsPerShardPerSecond, 2),
      s"   batches: ${result.progress}",
      s"   tasks: ${result.tasks}").mkString("\n")
  }

  def sink(config: SinkConfig, result: SinkBenchResult): String = {
    val raw = result.baseline
    val header =
      f"${"writer"}%-38s ${"rows"}%9s ${"Kinesis rec"}%12s ${"rows/rec"}%9s ${"seconds"}%9s ${"rows/s"}%9s " +
        f"${"vs raw"}%7s"
    def row(m: SinkMeasurement): String =
      f"${m.writer}%-38s ${grouped(m.rows.toDouble)}%9s ${grouped(m.landed.kinesisRecords.toDouble)}%12s " +
        f"${fmt(m.rows.toDouble / m.landed.kinesisRecords, 1)}%9s " +
        f"${fmt(m.seconds, 2)}%9s ${grouped(m.rowsPerSecond)}%9s ${percent(m.rowsPerSecond / raw.rowsPerSecond)}%7s"
    val all = result.measurements
    Seq(
      "",
      s"== Sink: rows of ${config.payloadBytes} B under ${grouped(config.keys.toDouble)} partition keys, each writer " +
        s"into a new stream of ${config.shards} shards; the sink writes a DataFrame of ${config.partitions} " +
        s"partitions through the benchmark's TLS port (BENCH_FRONT=1: continue-front.py's) after an untimed write " +
        s"of ${config.primeRows} rows into the same stream; sink options: " +
        s"kinesis.sink.maxConnections=${config.rawThreads} (as many requests in flight as the raw client's threads), " +
        config.options.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", "),
      header) ++ all.map(row) ++ all.map { m =>
      val l = m.landed
      s"   ${m.writer}: read back all ${grouped(l.distinct.toDouble)} rows written to its stream, " +
        s"plus ${l.duplicates} extra copies (at least once); the timed write's ${grouped(l.kinesisRecords.toDouble)} " +
        s"Kinesis records " +
        s"hold ${grouped(l.aggregates.toDouble)} KPL aggregates; " +
        m.primeSeconds.fold("")(p => s"priming write ${fmt(p, 1)} s; ") + m.detail
    }
  }.mkString("\n")

  def sinkLatency(config: SinkConfig, results: Seq[SinkLatency]): String = {
    val header = f"${"writer"}%-34s ${"rows"}%8s ${"Kinesis rec"}%12s ${"rows/rec"}%9s ${"arrival p50"}%12s " +
      f"${"p95"}%6s ${"p99"}%6s ${"max"}%6s ${"read p50"}%9s ${"p99"}%6s"
    def row(r: SinkLatency): String =
      f"${r.writer}%-34s ${r.rows}%8d ${r.kinesisRecords}%12d ${fmt(r.rowsPerRecord, 1)}%9s " +
        f"${pct(r.arrivalMs, 50)}%12s ${pct(r.arrivalMs, 95)}%6s ${pct(r.arrivalMs, 99)}%6s " +
        f"${r.arrivalMs.lastOption.fold("-")(_.toString)}%6s ${pct(r.readMs, 50)}%9s ${pct(r.readMs, 99)}%6s"
    (Seq(
      "",
      s"== Streaming-write latency (ms): ${config.latencyRowsPerSecond} rows/s of ${config.partitions} partitions " +
        s"for ${config.latencySeconds} s after ${config.latencyWarmUpSeconds} s of warm-up, each writer into a new " +
        s"stream of ${config.latencyShards} shards; from the row's evaluation in the write task (raw: its stamp " +
        "before the call) to its record's ApproximateArrivalTimestamp (arrival) and to a reader polling every 20 ms " +
        "seeing it (read); sink options: " + config.options.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", "),
      header) ++ results.map(row)).mkString("\n")
  }

  /** Nearest-rank percentile of sorted values. */
  def pct(sorted: Seq[Long], p: Int): String =
    if (sorted.isEmpty) "-"
    else sorted(math.max(0, math.ceil(p / 100.0 * sorted.size).toInt - 1)).toString

  private def fmt(d: Double, decimals: Int): String = String.format(Locale.ROOT, s"%.${decimals}f", Double.box(d))

  private def grouped(d: Double): String = String.format(Locale.ROOT, "%,.0f", Double.box(d))

  private def percent(ratio: Double): String = String.format(Locale.ROOT, "%.0f%%", Double.box(ratio * 100))
}
