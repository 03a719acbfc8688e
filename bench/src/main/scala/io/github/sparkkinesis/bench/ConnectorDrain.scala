package io.github.sparkkinesis.bench

import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.concurrent.duration._

import org.apache.spark.sql.{DataFrame, SparkSession}

import io.github.sparkkinesis.it.{Eventually, QueryChecks, SparkHarness}

/** The connector's drain: total time from `start()`, time to the first batch, and the batches it took. */
final case class ConnectorDrainResult(
    total: DrainResult,
    startSeconds: Double,
    batches: Int,
    progress: Progress,
    tasks: String) {

  /** From the first micro-batch to the last record counted: the drain without the query's start-up. */
  def afterStart: DrainResult = total.copy(seconds = total.seconds - startSeconds)
}

/**
 * The connector reading the backlog: `aws-kinesis` from TRIM_HORIZON into a `foreachBatch` sink that counts the rows of
 * each micro-batch (which makes Spark read and de-aggregate every record), timed from `start()` until the sink has
 * counted every user record of the backlog.
 */
object ConnectorDrain {

  def run(
      spark: SparkSession,
      backlog: Backlog,
      options: Map[String, String],
      timeout: FiniteDuration): ConnectorDrainResult = {
    val checkpoint = SparkHarness.newTempDir("bench-drain-checkpoint-")
    val counted = new AtomicLong()
    val batches = new AtomicInteger()
    val firstBatchAt = new AtomicLong()
    val doneAt = new AtomicLong()
    val lastBatchId = new AtomicLong(-1L)
    // An explicit function value: a lambda is ambiguous between the Scala and Java foreachBatch on Scala 2.12.
    val sink: (DataFrame, Long) => Unit = (batch, batchId) => {
      firstBatchAt.compareAndSet(0L, System.nanoTime())
      lastBatchId.set(batchId)
      val n = batch.count()
      batches.incrementAndGet()
      if (counted.addAndGet(n) >= backlog.userRecords) doneAt.compareAndSet(0L, System.nanoTime())
    }
    val taskTimes = TaskTimes.start(spark.sparkContext)
    val started = System.nanoTime()
    val query = spark.readStream.format("aws-kinesis")
      .options(BenchStreams.connectorOptions(backlog.stream, "TRIM_HORIZON") ++ options)
      .load()
      .writeStream
      .option("checkpointLocation", checkpoint.getAbsolutePath)
      .foreachBatch(sink)
      .start()
    val progress =
      try {
        Eventually.await(
          s"the connector to count ${backlog.userRecords} user records of ${backlog.stream}",
          timeout,
          s"${counted.get()} counted in ${batches.get()} batches; last progress: " +
            s"${Option(query.lastProgress).orNull}") {
          QueryChecks.failIfStopped(query)
          doneAt.get() != 0L
        }
        // Spark reports a batch once it is committed, a moment after the sink has seen it.
        Eventually.await(s"Spark's progress report of batch ${lastBatchId.get()}", 30.seconds) {
          query.recentProgress.exists(_.batchId >= lastBatchId.get())
        }
        Progress.of(query)
      } finally {
        query.stop()
        SparkHarness.deleteRecursively(checkpoint)
      }
    if (counted.get() != backlog.userRecords) {
      throw new IllegalStateException(s"the connector counted ${counted.get()} user records where the backlog holds " +
        s"${backlog.userRecords}")
    }
    ConnectorDrainResult(
      DrainResult(counted.get(), backlog.aggregates, (doneAt.get() - started) / 1e9),
      (firstBatchAt.get() - started) / 1e9,
      batches.get(),
      progress,
      taskTimes.stop())
  }
}
