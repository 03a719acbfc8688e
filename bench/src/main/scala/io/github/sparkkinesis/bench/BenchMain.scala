package io.github.sparkkinesis.bench

import scala.concurrent.duration._

import org.apache.spark.sql.SparkSession
import software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest

import io.github.sparkkinesis.it.{KinesisMock, TestStreams}

/**
 * The benchmark (`bench/run`): against one emulator, first the backlog drain (a raw SDK client, then the connector,
 * reading the same stream), then put-to-sink latency with the drain query stopped, then the sink's write throughput and
 * its streaming-write latency, each against a raw PutRecords client. Prints figures; asserts nothing beyond the readers
 * having read every record and every write having landed whole.
 */
object BenchMain {

  def main(args: Array[String]): Unit =
    if (args.contains("--help")) println(BenchConfig.Usage) else run(args)

  private def run(args: Array[String]): Unit = {
    val config =
      try BenchConfig.parse(args.toSeq)
      catch {
        case e: IllegalArgumentException =>
          System.err.println(s"bench: ${e.getMessage}")
          sys.exit(2)
      }
    // The sink part's TLS endpoint is looked up first, so that a run missing it fails before measuring anything.
    log(s"kinesis-mock at ${KinesisMock.endpoint}" +
      (if (config.parts("sink") || config.parts("sink-latency") || config.parts("efo") || config.parts("realtime") ||
         config.parts("k2k"))
         s", TLS ${KinesisMock.tlsEndpoint}"
       else ""))
    val spark = BenchStreams.session()
    try {
      if (config.parts("drain") || config.parts("latency")) {
        log(f"Spark warmed up with one micro-batch of the rate source in ${BenchStreams.warmUp(spark)}%.1f s")
      }
      if (config.parts("drain")) {
        val warmUp = BenchStreams.warmUpReaders(config) { b =>
          RawDrain.run(b, config.rawThreads)
          ConnectorDrain.run(spark, b, config.drainOptions, config.drainTimeoutSec.seconds)
          ()
        }
        log(f"drain: raw client and connector warmed up on a 1-shard stream in $warmUp%.1f s")
        val runs = config.drainRuns.map { run =>
          val (report, ratios) = drain(run, spark)
          println(report)
          run.shards -> ratios
        }
        if (runs.size > 1) println(Report.drainSummary(runs))
      }
      if (config.parts("latency")) {
        log("latency: producer and query running")
        println(Report.latency(config, LatencyBench.run(spark, config)))
      }
      if (config.parts("efo")) {
        log(f"Spark warmed up with one micro-batch of the rate source in ${BenchStreams.warmUp(spark)}%.1f s")
        println(EfoBench.run(spark, config, log))
      }
      if (config.parts("realtime")) {
        log(f"Spark warmed up with one micro-batch of the rate source in ${BenchStreams.warmUp(spark)}%.1f s")
        println(RealTimeBench.run(spark, config, log))
      }
      if (config.parts("k2k")) {
        log(f"Spark warmed up with one micro-batch of the rate source in ${BenchStreams.warmUp(spark)}%.1f s")
        println(KinesisToKinesisBench.run(spark, config, log))
      }
      if (config.parts("sink")) {
        println(Report.sink(config.sink, SinkBench.run(spark, config.sink, log)))
      }
      if (config.parts("sink-latency")) {
        println(Report.sinkLatency(config.sink, SinkLatencyBench.run(spark, config.sink, log)))
      }
    } finally spark.stop()
  }

  /**
   * One drain run: its report, and the connector's rate over the raw client's from `start()` and from its first batch.
   */
  private def drain(config: BenchConfig, spark: SparkSession): (String, (Double, Double)) = {
    log(s"drain: filling ${config.shards} shards with ${config.aggregates} aggregates of " +
      s"${config.userRecordsPerAggregate} user records")
    val backlog = Backlog.fill(config)
    log(f"drain: filled in ${backlog.fillSeconds}%.1f s; raw SDK client reading")
    System.gc()
    val raw = RawDrain.run(backlog, config.rawThreads)
    if (raw.userRecords != backlog.userRecords || raw.kinesisRecords != backlog.aggregates) {
      throw new IllegalStateException(s"the raw client read ${raw.userRecords} user records in ${raw.kinesisRecords} " +
        s"Kinesis records; the backlog holds ${backlog.userRecords} in ${backlog.aggregates}")
    }
    log(f"drain: raw client done in ${raw.seconds}%.2f s; connector reading")
    System.gc()
    val connector = ConnectorDrain.run(spark, backlog, config.drainOptions, config.drainTimeoutSec.seconds)
    log(f"drain: connector done in ${connector.total.seconds}%.2f s")
    // Frees the emulator's memory before the latency part.
    TestStreams.client.deleteStream(DeleteStreamRequest.builder().streamName(backlog.stream).build())
    val ratios = (
      connector.total.userRecordsPerSecond / raw.userRecordsPerSecond,
      connector.afterStart.userRecordsPerSecond / raw.userRecordsPerSecond)
    (Report.drain(config, backlog, raw, connector), ratios)
  }

  private def log(message: String): Unit = System.err.println(s"bench: $message")
}
