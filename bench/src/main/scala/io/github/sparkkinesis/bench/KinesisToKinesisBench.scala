package io.github.sparkkinesis.bench

import scala.concurrent.duration._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest

import io.github.sparkkinesis.it.{Eventually, KinesisMock, QueryChecks, SparkHarness, TestStreams}
import io.github.sparkkinesis.sink.KinesisForeachWriter

/**
 * One Kinesis-to-Kinesis query's latencies in milliseconds from the put into the source to the row's read from the
 * target (`latenciesMs`), to its record's arrival in the target (`arrivalMs`, Kinesis's timestamp: without the reader's
 * polling) and to the row's hand-over to the sink in its task (`handedMs`), and the rows the target got beyond those
 * put.
 */
final case class KinesisToKinesisResult(
    name: String,
    sent: Int,
    latenciesMs: Seq[Long],
    arrivalMs: Seq[Long],
    handedMs: Seq[Long],
    duplicates: Int)

/**
 * Kinesis to Kinesis (`--only k2k`, Spark 4.1+): the latency part's producer (one record every `latencyIntervalMs` on
 * `--realtime-shards` shards, its data the send time in epoch milliseconds) into a source stream, a query copying each
 * row's data and partition key to a target stream, and a [[StreamTail]] reading the target (a GetRecords round every 20
 * ms) that takes `read - sent`. Micro-batch (the `aws-kinesis` sink, default trigger) and real-time mode
 * (`KinesisForeachWriter`, the sink real-time mode accepts) run one after the other on new streams with default
 * options. Fails unless the target got every record sent exactly once.
 */
object KinesisToKinesisBench {

  private val TailPollMs = 20L
  private val DeliveryTimeout = 60.seconds

  def run(spark: SparkSession, config: BenchConfig, log: String => Unit): String = {
    val rt = config.copy(latencyShards = config.realtimeShards)
    log("k2k: micro-batch, aws-kinesis sink, default trigger")
    val microBatch = once(spark, rt, "micro-batch, aws-kinesis sink, default trigger", None)
    log(s"k2k: real-time, KinesisForeachWriter, ${config.realtimeBatch} batches")
    val realTime = once(
      spark,
      rt,
      s"real-time, KinesisForeachWriter, ${config.realtimeBatch} batches",
      Some(RealTimeQueries.realTime(config.realtimeBatch)))
    report(rt, Seq(microBatch, realTime))
  }

  private def once(
      spark: SparkSession,
      config: BenchConfig,
      name: String,
      trigger: Option[Trigger]): KinesisToKinesisResult = {
    val Seq(source, target) =
      Seq("bench-k2k-src", "bench-k2k-dst").map(TestStreams.createStream(_, config.latencyShards))
    val tail = new StreamTail(target, TailPollMs)
    val checkpoint = SparkHarness.newTempDir("bench-k2k-checkpoint-")
    val query = start(spark, source, target, checkpoint.getAbsolutePath, trigger, config.latencyOptions)
    try {
      // Until a record has gone through, the query and the producer are still starting: not what is measured here.
      // Warm-up records are stamped before measuring starts, so the measured rows leave them out.
      val warmUps = RealTimeLatency.warmUp(s"$name target", query) {
        tail.check()
        tail.count > 0
      }(i => RealTimeLatency.put(source, s"warm-up-$i", System.currentTimeMillis().toString))
      val measuredFrom = System.currentTimeMillis()
      val (sent, _) = LatencyBench.produce(source, config)
      Eventually.await(s"all $sent records to reach the $name target", DeliveryTimeout, s"${tail.count} read") {
        QueryChecks.failIfStopped(query)
        tail.check()
        tail.count >= warmUps + sent
      }
      Thread.sleep(1000) // a late duplicate would show here
      val (rows, _) = tail.stop()
      val measured = rows.filter(_.stampedMs >= measuredFrom)
      if (measured.size < sent) {
        throw new IllegalStateException(s"the $name target got ${measured.size} of the $sent records sent")
      }
      KinesisToKinesisResult(
        name,
        sent,
        measured.map(r => r.readMs - r.stampedMs),
        measured.map(r => r.arrivedMs - r.stampedMs),
        measured.map(r => r.rest.toLong - r.stampedMs),
        measured.size - sent)
    } finally {
      query.stop()
      SparkHarness.deleteRecursively(checkpoint)
      Seq(source, target).foreach(s =>
        TestStreams.client.deleteStream(DeleteStreamRequest.builder().streamName(s)
          .build()))
    }
  }

  /** The source's data and partition key written to `target`: in real-time mode by the foreach writer. */
  private def start(
      spark: SparkSession,
      source: String,
      target: String,
      checkpoint: String,
      trigger: Option[Trigger],
      options: Map[String, String]): StreamingQuery = {
    val df = spark.readStream.format("aws-kinesis")
      .options(BenchStreams.connectorOptions(source, "TRIM_HORIZON") ++ options).load()
      // The data gets the time its task hands it to the sink, after the source's stamp: "<put ms>:<handed ms>".
      .selectExpr(
        "concat(CAST(data AS STRING), ':', reflect('java.lang.System', 'currentTimeMillis')) AS data",
        "partitionKey")
    val sink = sinkOptions(target)
    val writer = trigger match {
      case Some(t) => df.writeStream.foreach(KinesisForeachWriter(sink, df.schema)).trigger(t).outputMode("update")
      case None => df.writeStream.format("aws-kinesis").options(sink)
    }
    writer.option("checkpointLocation", checkpoint).start()
  }

  private def sinkOptions(target: String): Map[String, String] = Map(
    "kinesis.streamName" -> target,
    "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
    "kinesis.verifyCertificate" -> "false",
    "kinesis.region" -> TestStreams.Region,
    "kinesis.awsAccessKeyId" -> TestStreams.AccessKeyId,
    "kinesis.awsSecretKey" -> TestStreams.SecretKey)

  private def report(config: BenchConfig, results: Seq[KinesisToKinesisResult]): String = {
    def row(r: KinesisToKinesisResult) = {
      val (s, a, h) = (r.latenciesMs.sorted, r.arrivalMs.sorted, r.handedMs.sorted)
      f"${r.name}%-52s ${s.size}%8d ${Report.pct(s, 50)}%7s ${Report.pct(s, 95)}%7s ${Report.pct(s, 99)}%7s " +
        f"${s.lastOption.fold("-")(_.toString)}%7s ${Report.pct(a, 50)}%9s ${Report.pct(a, 99)}%9s " +
        f"${Report.pct(h, 50)}%9s ${Report.pct(h, 99)}%9s ${r.duplicates}%5d"
    }
    (Seq(
      "",
      s"== Kinesis to Kinesis latency: ${config.latencyShards} shards, one record every ${config.latencyIntervalMs} " +
        s"ms for ${config.latencySeconds} s, put into the source to read back from the target (a GetRecords round " +
        s"every $TailPollMs ms); sink options: defaults",
      f"${"query"}%-52s ${"samples"}%8s ${"p50"}%7s ${"p95"}%7s ${"p99"}%7s ${"max"}%7s ${"arr. p50"}%9s " +
        f"${"arr. p99"}%9s ${"sink p50"}%9s ${"sink p99"}%9s ${"dups"}%5s",
      "   p50 ... max: put into the source to read from the target; arr.: to the record's arrival in the target " +
        "(ApproximateArrivalTimestamp, without the reader's polling); sink: to the row's hand-over to the sink in " +
        "its task") ++
      results.map(row)).mkString("\n")
  }
}
