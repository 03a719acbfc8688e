package io.github.sparkkinesis.bench

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.JavaConverters._
import scala.concurrent.duration._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{DeleteStreamRequest, PutRecordRequest}

import io.github.sparkkinesis.it.{Eventually, QueryChecks, SparkHarness, TestStreams}

/**
 * One query's put-to-row latencies in milliseconds, and the GetRecords calls per shard per second it spent while
 * measured (None when no progress report covers that time: a real-time batch reports only when it ends), and the median
 * of each of Spark's `durationMs` entries over those reports.
 */
final case class RealTimeLatencyResult(
    name: String,
    sent: Int,
    latenciesMs: Seq[Long],
    duplicates: Int,
    callsPerShardPerSecond: Option[Double],
    reports: Int,
    durationsMs: Map[String, Long] = Map.empty)

/**
 * Put-to-row latency of one query on a fresh stream: the latency part's producer (one record every `latencyIntervalMs`,
 * its data the send time in epoch milliseconds, partition key `key-<i>`), read from TRIM_HORIZON into a `foreach` sink
 * that takes `now - sent` as its task hands it each row. Micro-batch and real-time queries get the same sink, so the
 * figures differ only by the trigger (and the options). Fails unless every record sent reached the sink exactly once.
 */
object RealTimeLatency {

  private val WarmUpTimeout = 2.minutes
  private val DeliveryTimeout = 60.seconds

  /**
   * Runs it with `trigger` (None: the default micro-batch trigger). When `reportWithin` is set, waits up to that long
   * after the last record for a progress report covering the measured time (a short real-time batch's end).
   */
  def run(
      spark: SparkSession,
      config: BenchConfig,
      name: String,
      trigger: Option[Trigger],
      options: Map[String, String],
      reportWithin: Option[FiniteDuration]): RealTimeLatencyResult = {
    val stream = TestStreams.createStream("bench-rt-latency", config.latencyShards)
    val checkpoint = SparkHarness.newTempDir("bench-rt-latency-checkpoint-")
    val (run, collected) = RealTimeQueries.newRun()
    val df = spark.readStream.format("aws-kinesis")
      .options(BenchStreams.connectorOptions(stream, "TRIM_HORIZON") ++ options).load()
    val query = RealTimeQueries.start(df, new RealTimeQueries.LatencyWriter(run), checkpoint.getAbsolutePath, trigger)
    def measured = collected.rows.asScala.filter(_._2 >= 0L).toVector
    try {
      // Until a record has gone through, the query is still starting: that is not the latency measured here.
      warmUp(s"$name sink", query)(collected.count.get() > 0)(i => put(stream, s"warm-up-$i", "warm-up"))
      val measuredFrom = System.currentTimeMillis()
      val (sent, _) = LatencyBench.produce(stream, config)
      Eventually.await(s"all $sent records to reach the $name sink", DeliveryTimeout, s"${measured.size} arrived") {
        QueryChecks.failIfStopped(query)
        measured.size >= sent
      }
      val measuredTo = System.currentTimeMillis()
      Thread.sleep(1000) // a late duplicate would show here
      reportWithin.foreach { limit =>
        Eventually.await(s"a progress report of the $name query after the measured time", limit) {
          QueryChecks.failIfStopped(query)
          query.recentProgress.exists(p => RealTimeQueries.endedMs(p) >= measuredTo)
        }
      }
      val rows = measured
      val keys = rows.map(_._1).distinct.size
      if (keys != sent) {
        throw new IllegalStateException(s"the $name sink saw $keys of the $sent records sent (${rows.size} rows)")
      }
      // Reports of the batches that ran while the producer did; a real-time batch counts for as long as it ran.
      val reports = query.recentProgress.toSeq.filter(p => RealTimeQueries.endedMs(p) > measuredFrom)
      val spanMs =
        if (trigger.isEmpty) (measuredTo - measuredFrom).toDouble
        else reports.map(RealTimeQueries.batchMs).sum.toDouble
      val calls =
        if (reports.isEmpty || spanMs <= 0) None
        else Some(RealTimeQueries.getRecordsCalls(reports) / (spanMs / 1000) / config.latencyShards)
      RealTimeLatencyResult(name, sent, rows.map(_._2), rows.size - keys, calls, reports.size, medianDurations(reports))
    } finally {
      query.stop()
      RealTimeQueries.endRun(run)
      SparkHarness.deleteRecursively(checkpoint)
      // With consumers still registered (fan-out), the stream is deleted with them.
      TestStreams.client.deleteStream(
        DeleteStreamRequest.builder().streamName(stream).enforceConsumerDeletion(true).build())
    }
  }

  /** The median of each `durationMs` entry over `reports` (what Spark spends on a batch, by phase). */
  private def medianDurations(reports: Seq[org.apache.spark.sql.streaming.StreamingQueryProgress]): Map[String, Long] =
    reports.flatMap(_.durationMs.asScala.toSeq).groupBy(_._1).map { case (phase, values) =>
      val sorted = values.map(_._2.longValue).sorted
      phase -> sorted(sorted.size / 2)
    }

  /**
   * Calls `put(i)` for i = 0, 1, ... every 500 ms until `through` holds (a record has gone through `query` into
   * `what`), failing if the query stops or nothing goes through within two minutes; returns how many were put.
   */
  def warmUp(what: String, query: StreamingQuery)(through: => Boolean)(put: Int => Unit): Int = {
    var sent = 0
    Eventually.await(s"a warm-up record to reach the $what", WarmUpTimeout, s"$sent sent") {
      QueryChecks.failIfStopped(query)
      val done = through
      if (!done) {
        put(sent)
        sent += 1
        Thread.sleep(500)
      }
      done
    }
    sent
  }

  def put(stream: String, key: String, payload: String): Unit =
    TestStreams.client.putRecord(PutRecordRequest.builder()
      .streamName(stream).partitionKey(key).data(SdkBytes.fromString(payload, UTF_8)).build())
}
