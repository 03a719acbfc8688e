package io.github.sparkkinesis.bench

import scala.concurrent.duration._

import org.apache.spark.sql.SparkSession

import io.github.sparkkinesis.it.{Eventually, QueryChecks, SparkHarness}

/** A real-time query's drain: from `start()` to the last row, and from its first row to its last. */
final case class RealTimeDrainResult(total: DrainResult, firstRowSeconds: Double) {
  def afterStart: DrainResult = total.copy(seconds = total.seconds - firstRowSeconds)
}

/**
 * The connector draining the backlog in real-time mode: `aws-kinesis` from TRIM_HORIZON with `Trigger.RealTime(batch)`
 * into a `foreach` sink that counts rows (each one read, de-aggregated and built), timed from `start()` until the sink
 * has counted every user record. The batch is longer than the drain, so it is one real-time batch whose tasks (one per
 * core) read their shards on threads of their own. Fails unless the count is exact, a second after the last row too.
 */
object RealTimeDrain {

  def run(
      spark: SparkSession,
      backlog: Backlog,
      options: Map[String, String],
      batch: String,
      timeout: FiniteDuration): RealTimeDrainResult = {
    val checkpoint = SparkHarness.newTempDir("bench-rt-drain-checkpoint-")
    val (run, collected) = RealTimeQueries.newRun()
    val started = System.nanoTime()
    val df = spark.readStream.format("aws-kinesis")
      .options(BenchStreams.connectorOptions(backlog.stream, "TRIM_HORIZON") ++ options).load()
    val query = RealTimeQueries.start(
      df,
      new RealTimeQueries.CountingWriter(run),
      checkpoint.getAbsolutePath,
      Some(RealTimeQueries.realTime(batch)))
    try {
      Eventually.await(
        s"the real-time query to count ${backlog.userRecords} user records of ${backlog.stream}",
        timeout,
        s"${collected.count.get()} counted") {
        QueryChecks.failIfStopped(query)
        collected.count.get() >= backlog.userRecords
      }
      Thread.sleep(1000) // a late duplicate would show here
    } finally {
      query.stop()
      RealTimeQueries.endRun(run)
      SparkHarness.deleteRecursively(checkpoint)
    }
    val counted = collected.count.get()
    if (counted != backlog.userRecords) {
      throw new IllegalStateException(s"the real-time query counted $counted user records where the backlog holds " +
        s"${backlog.userRecords}")
    }
    RealTimeDrainResult(
      DrainResult(counted, backlog.aggregates, (collected.lastRowNanos.get() - started) / 1e9),
      (collected.firstRowNanos.get() - started) / 1e9)
  }
}
