package io.github.sparkkinesis.bench

/**
 * What one benchmark run measures, from the command line: the backlog's shape for the drain part, the producer's pace
 * for the latency part, the rows written by the sink part, and connector options for each.
 */
final case class BenchConfig(
    shards: Int = 24,
    drainShards: Seq[Int] = Nil,
    aggregates: Int = 960,
    userRecordsPerAggregate: Int = 500,
    payloadBytes: Int = 32,
    rawThreads: Int = 2,
    drainTimeoutSec: Int = 600,
    drainOptions: Map[String, String] = BenchConfig.DefaultDrainOptions,
    latencyShards: Int = 2,
    latencySeconds: Int = 30,
    latencyIntervalMs: Int = 5,
    latencyOptions: Map[String, String] = Map.empty,
    realtimeShards: Int = 4,
    realtimeBatch: String = "5 minutes",
    realtimeShortBatch: Option[String] = Some("10 seconds"),
    sink: SinkConfig = SinkConfig(),
    parts: Set[String] = BenchConfig.Parts -- BenchConfig.OptInParts) {

  def userRecords: Long = aggregates.toLong * userRecordsPerAggregate

  /**
   * The drain part's runs, one per shard count of `--drain-shards` (else `--shards`): the same backlog of `aggregates`
   * (at least one per shard) spread over that many shards, so that the runs differ only in how many shards hold it.
   */
  def drainRuns: Seq[BenchConfig] =
    (if (drainShards.isEmpty) Seq(shards) else drainShards).map(n => copy(shards = n, aggregates = aggregates max n))
}

object BenchConfig {

  val Parts: Set[String] = Set("drain", "latency", "sink", "sink-latency", "efo", "realtime", "k2k")

  /** Parts a run without --only leaves out: real-time mode needs Spark 4.1+, which the 2.12 line does not have. */
  val OptInParts: Set[String] = Set("realtime", "k2k")

  /**
   * The emulator has no per-shard call limit and the raw client does not pace its calls, so the drain query paces at 50
   * ms instead of the 200 ms that suits real Kinesis (5 calls per second per shard), and lets a task read its shard for
   * up to a minute, so that each shard is drained in one task.
   */
  val DefaultDrainOptions: Map[String, String] = Map(
    "kinesis.getRecords.fetchInterval" -> "50",
    "kinesis.maxFetchTimePerShard" -> "60")

  val Usage: String =
    """Options (defaults in brackets):
      |  --shards N                 shards of the drain stream [24]
      |  --drain-shards N[,N]       drain the same backlog from streams of each of these shard counts in turn, each
      |                             against the raw client in the same run, e.g. 2,24,200 (default: --shards)
      |  --aggregates N             KPL aggregates (Kinesis records) in the backlog, spread evenly over the shards [960]
      |  --user-records N           user records per aggregate [500]
      |  --payload-bytes N          bytes per user record [32]
      |  --raw-threads N            threads of the raw SDK reader (local[2] runs 2 tasks at a time) [2]
      |  --drain-timeout-sec N      give up on the connector's drain after N seconds [600]
      |  --drain-option K=V         connector option for the drain query (repeatable; overrides the defaults
      |                             kinesis.getRecords.fetchInterval=50, kinesis.maxFetchTimePerShard=60)
      |  --latency-shards N         shards of the latency stream [2]
      |  --latency-seconds N        how long the producer runs [30]
      |  --latency-interval-ms N    one record every N ms (200 records/s) [5]
      |  --latency-option K=V       connector option for the latency query (repeatable; default: none)
      |  --realtime-shards N        shards of the realtime part's latency streams [4]
      |  --realtime-batch D         real-time batch (checkpoint interval) of its latency and drain queries [5 minutes]
      |  --realtime-short-batch D   a second real-time latency query with these shorter batches, whose progress
      |                             reports give its GetRecords calls; "" for none [10 seconds]
      |  --sink-shards N            shards of each stream the sink part writes to (a new one per write) [40]
      |  --sink-rows N              rows written by the raw client and by the sink without aggregation [20000]
      |  --sink-aggregated-rows N   rows written by the sink with aggregation [200000]
      |  --sink-payload-bytes N     bytes of each row's data, at least 16 [100]
      |  --sink-keys N              distinct partition keys [10000]
      |  --sink-partitions N        partitions of the DataFrame written (local[2] runs 2 tasks at a time) [4]
      |  --sink-raw-threads N       threads of the raw PutRecords writer, 500 records per call [4]
      |  --sink-prime-rows N        rows each writer writes into its stream, untimed, before its timed write
      |                             (starts the KPL's daemon, lets it load the stream's shard map); 0: none [2000]
      |  --sink-option K=V          connector option for the sink's writes (repeatable; overrides the default
      |                             kinesis.sink.recordTtl=300000)
      |  --sink-latency-shards N    shards of each stream the streaming-write latency part writes to [40]
      |  --sink-latency-rows-per-second N  pace of its writers (the sink's rate source, the raw client) [1000]
      |  --sink-latency-seconds N   how long its rows are measured [30]
      |  --sink-latency-warm-up-seconds N  how long it writes before measuring [10]
      |  --only PART[,PART]         run only these parts: drain, latency, sink, sink-latency, efo, realtime, k2k
      |                             (realtime and k2k, Kinesis to Kinesis in real time against micro-batch, Spark
      |                             4.1+ only, run only when named here)
      |""".stripMargin

  /** Parses `--name value` pairs; fails with a message naming the bad argument. */
  def parse(args: Seq[String]): BenchConfig = {
    def loop(rest: List[String], config: BenchConfig): BenchConfig = rest match {
      case Nil => config
      case flag :: value :: tail if flag.startsWith("--") => loop(tail, set(config, flag.drop(2), value))
      case other :: _ => throw new IllegalArgumentException(s"unexpected argument '$other' (or it lacks a value)")
    }
    val config = loop(args.toList, BenchConfig())
    require(
      config.shards > 0 && config.aggregates >= config.shards,
      s"--aggregates (${config.aggregates}) must be at least --shards (${config.shards}), which must be positive")
    require(
      config.drainShards.forall(_ > 0) &&
        config.userRecordsPerAggregate > 0 && config.payloadBytes > 0 && config.rawThreads > 0 &&
        config.latencyShards > 0 && config.realtimeShards > 0 && config.latencySeconds > 0 &&
        config.latencyIntervalMs > 0,
      "counts, sizes and durations must be positive")
    config.sink.check()
    config
  }

  private def set(c: BenchConfig, name: String, value: String): BenchConfig = name match {
    case "shards" => c.copy(shards = int(name, value))
    case "drain-shards" => c.copy(drainShards = value.split(",").toSeq.map(v => int(name, v.trim)))
    case "aggregates" => c.copy(aggregates = int(name, value))
    case "user-records" => c.copy(userRecordsPerAggregate = int(name, value))
    case "payload-bytes" => c.copy(payloadBytes = int(name, value))
    case "raw-threads" => c.copy(rawThreads = int(name, value))
    case "drain-timeout-sec" => c.copy(drainTimeoutSec = int(name, value))
    case "drain-option" => c.copy(drainOptions = c.drainOptions + keyValue(name, value))
    case "latency-shards" => c.copy(latencyShards = int(name, value))
    case "latency-seconds" => c.copy(latencySeconds = int(name, value))
    case "latency-interval-ms" => c.copy(latencyIntervalMs = int(name, value))
    case "latency-option" => c.copy(latencyOptions = c.latencyOptions + keyValue(name, value))
    case "realtime-shards" => c.copy(realtimeShards = int(name, value))
    case "realtime-batch" => c.copy(realtimeBatch = value)
    case "realtime-short-batch" => c.copy(realtimeShortBatch = Some(value.trim).filter(_.nonEmpty))
    case "only" => c.copy(parts = parts(value))
    case n if n.startsWith("sink-") => c.copy(sink = setSink(c.sink, name, value))
    case _ => throw new IllegalArgumentException(s"unknown option --$name\n$Usage")
  }

  private def setSink(c: SinkConfig, name: String, value: String): SinkConfig = name match {
    case "sink-shards" => c.copy(shards = int(name, value))
    case "sink-rows" => c.copy(rows = int(name, value))
    case "sink-aggregated-rows" => c.copy(aggregatedRows = int(name, value))
    case "sink-payload-bytes" => c.copy(payloadBytes = int(name, value))
    case "sink-keys" => c.copy(keys = int(name, value))
    case "sink-partitions" => c.copy(partitions = int(name, value))
    case "sink-raw-threads" => c.copy(rawThreads = int(name, value))
    case "sink-prime-rows" => c.copy(primeRows = int(name, value))
    case "sink-option" => c.copy(options = c.options + keyValue(name, value))
    case "sink-latency-shards" => c.copy(latencyShards = int(name, value))
    case "sink-latency-rows-per-second" => c.copy(latencyRowsPerSecond = int(name, value))
    case "sink-latency-seconds" => c.copy(latencySeconds = int(name, value))
    case "sink-latency-warm-up-seconds" => c.copy(latencyWarmUpSeconds = int(name, value))
    case _ => throw new IllegalArgumentException(s"unknown option --$name\n$Usage")
  }

  private def parts(value: String): Set[String] = {
    val named = value.split(",").map(_.trim).toSet
    if (named.isEmpty || !named.subsetOf(Parts)) {
      throw new IllegalArgumentException(s"--only takes parts from ${Parts.toSeq.sorted.mkString(", ")} separated " +
        s"by commas, not '$value'")
    }
    named
  }

  private def int(name: String, value: String): Int =
    try value.toInt
    catch {
      case _: NumberFormatException => throw new IllegalArgumentException(s"--$name takes a whole number, not '$value'")
    }

  private def keyValue(name: String, value: String): (String, String) = value.split("=", 2) match {
    case Array(k, v) if k.nonEmpty => (k, v)
    case _ => throw new IllegalArgumentException(s"--$name takes KEY=VALUE, not '$value'")
  }
}
