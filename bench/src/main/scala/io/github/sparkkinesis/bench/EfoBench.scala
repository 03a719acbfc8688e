package io.github.sparkkinesis.bench

import java.util.Locale

import scala.concurrent.duration._

import org.apache.spark.sql.SparkSession
import software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest

import io.github.sparkkinesis.it.{KinesisMock, TestStreams}

/**
 * Enhanced fan-out against polling on one emulator (`--only efo`): one backlog stream drained by a plain SDK
 * SubscribeToShard client, the connector with kinesis.consumerType=SubscribeToShard and the connector polling; then
 * put-to-sink latency at the latency part's steady rate, polling, fan-out and the plain client, each on a fresh stream.
 */
object EfoBench {

  /** What fan-out needs against the emulator: its TLS port (HTTP/2 with ALPN), whose certificate is self-signed. */
  def efoOptions(consumer: String): Map[String, String] = Map(
    "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
    "kinesis.verifyCertificate" -> "false",
    "kinesis.consumerType" -> "SubscribeToShard",
    "kinesis.consumerName" -> consumer)

  def run(spark: SparkSession, config: BenchConfig, log: String => Unit): String = {
    log(s"efo: filling ${config.shards} shards with ${config.aggregates} aggregates of " +
      s"${config.userRecordsPerAggregate} user records")
    val backlog = Backlog.fill(config)
    val warmUp = BenchStreams.warmUpReaders(config) { b =>
      RawSubscribeDrain.run(b)
      val fanOut = config.drainOptions ++ efoOptions("bench-efo-warm-up")
      ConnectorDrain.run(spark, b, fanOut, config.drainTimeoutSec.seconds)
      ConnectorDrain.run(spark, b, config.drainOptions, config.drainTimeoutSec.seconds)
      ()
    }
    log(f"efo: raw client and connector (fan-out, polling) warmed up on a 1-shard stream in $warmUp%.1f s")
    System.gc()
    val rawRun = RawSubscribeDrain.run(backlog)
    val raw = rawRun.drain
    check("raw SubscribeToShard client", raw.userRecords, backlog)
    log(f"efo: raw SubscribeToShard client done in ${raw.seconds}%.2f s; connector (fan-out) reading")
    System.gc()
    val efo = ConnectorDrain.run(
      spark,
      backlog,
      config.drainOptions ++ efoOptions("bench-efo-drain"),
      config.drainTimeoutSec.seconds)
    log(f"efo: connector (fan-out) done in ${efo.total.seconds}%.2f s; connector (polling) reading")
    System.gc()
    val polling = ConnectorDrain.run(spark, backlog, config.drainOptions, config.drainTimeoutSec.seconds)
    TestStreams.client.deleteStream(DeleteStreamRequest.builder().streamName(backlog.stream).build())
    log("efo: latency, polling")
    val pollingLatency = LatencyBench.run(spark, config)
    log("efo: latency, fan-out")
    val efoLatency =
      LatencyBench.run(spark, config.copy(latencyOptions = config.latencyOptions ++ efoOptions("bench-efo-latency")))
    log("efo: latency, raw SubscribeToShard client")
    val rawLatency = RawSubscribeLatency.run(config)
    report(config, backlog, rawRun, efo, polling, pollingLatency, efoLatency, rawLatency)
  }

  private def check(who: String, read: Long, backlog: Backlog): Unit =
    if (read != backlog.userRecords) {
      throw new IllegalStateException(s"the $who read $read user records; the backlog holds ${backlog.userRecords}")
    }

  private def report(
      config: BenchConfig,
      backlog: Backlog,
      rawRun: RawSubscribeDrain.Result,
      efo: ConnectorDrainResult,
      polling: ConnectorDrainResult,
      pollingLatency: LatencyResult,
      efoLatency: LatencyResult,
      rawLatency: Seq[Long]): String = {
    val raw = rawRun.drain
    def f(d: Double, decimals: Int) = String.format(Locale.ROOT, s"%.${decimals}f", Double.box(d))
    def drainRow(name: String, r: DrainResult) =
      f"$name%-44s ${f(r.seconds, 2)}%9s ${f(r.userRecordsPerSecond, 0)}%12s " +
        f"${f(100 * r.userRecordsPerSecond / raw.userRecordsPerSecond, 0)}%6s%%"
    def latencyRow(name: String, latenciesMs: Seq[Long], getRecordsPerShardPerSecond: String) = {
      val s = latenciesMs.sorted
      f"$name%-44s ${s.size}%8d ${Report.pct(s, 50)}%7s ${Report.pct(s, 95)}%7s ${Report.pct(s, 99)}%7s " +
        f"$getRecordsPerShardPerSecond%10s"
    }
    def connectorLatencyRow(name: String, r: LatencyResult) =
      latencyRow(name, r.latenciesMs, f(r.getRecordsPerShardPerSecond, 2))
    Seq(
      "",
      s"== Enhanced fan-out vs polling: ${backlog.stream}: ${backlog.shardIds.size} shards, ${backlog.userRecords} " +
        s"user records " +
        s"in ${backlog.aggregates} KPL aggregates; drain options ${config.drainOptions.toSeq.sorted.mkString(", ")}",
      f"${"reader"}%-44s ${"seconds"}%9s ${"user rec/s"}%12s ${"vs raw"}%7s",
      drainRow("raw SDK SubscribeToShard client", raw),
      drainRow("raw client, with registering its consumer", rawRun.withRegistration),
      drainRow("connector fan-out, from start()", efo.total),
      drainRow("connector fan-out, from first batch", efo.afterStart),
      drainRow("connector polling, from start()", polling.total),
      drainRow("connector polling, from first batch", polling.afterStart),
      s"   start() to first batch: fan-out ${f(efo.startSeconds, 2)} s, polling ${f(polling.startSeconds, 2)} s",
      s"   fan-out: ${efo.batches} batches, ${efo.progress}",
      s"   polling: ${polling.batches} batches, ${polling.progress}",
      "",
      s"== Put-to-sink latency, ${config.latencyShards} shards, one record every ${config.latencyIntervalMs} ms for " +
        s"${config.latencySeconds} s, default trigger",
      f"${"query"}%-44s ${"samples"}%8s ${"p50"}%7s ${"p95"}%7s ${"p99"}%7s ${"GetRec/s/sh"}%10s",
      connectorLatencyRow("connector polling", pollingLatency),
      connectorLatencyRow("connector fan-out", efoLatency),
      latencyRow("raw SDK SubscribeToShard client (to receipt)", rawLatency, "0"),
      s"   polling: ${pollingLatency.batches} batches, ${pollingLatency.progress}",
      s"   fan-out: ${efoLatency.batches} batches, ${efoLatency.progress}").mkString("\n")
  }
}
