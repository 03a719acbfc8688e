package io.github.sparkkinesis.bench

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.streaming.Trigger
import software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest

import io.github.sparkkinesis.it.{KinesisMock, SparkHarness, TestStreams}

/** The Spark session and connector options both parts of the benchmark share. */
object BenchStreams {

  /** local[2] as in the issue, without the UI; loopback only, like the emulator. */
  def session(): SparkSession = SparkSession.builder()
    .master("local[2]")
    .appName("spark-kinesis-bench")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    // Every batch's progress report is kept, for the per-phase means the report prints.
    .config("spark.sql.streaming.numRecentProgressUpdates", "10000")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .getOrCreate()

  /**
   * Runs one micro-batch of Spark's own `rate` source through a counting `foreachBatch` sink, so that the connector's
   * first query does not also pay for loading and compiling Spark's streaming machinery. Returns how long that took, in
   * seconds.
   */
  def warmUp(spark: SparkSession): Double = {
    val started = System.nanoTime()
    val checkpoint = SparkHarness.newTempDir("bench-warm-up-")
    val sink: (DataFrame, Long) => Unit = (batch, _) => batch.count()
    try {
      spark.readStream.format("rate").option("rowsPerSecond", "1000").load()
        .writeStream.option("checkpointLocation", checkpoint.getAbsolutePath)
        .trigger(Trigger.AvailableNow()).foreachBatch(sink).start()
        .awaitTermination()
    } finally SparkHarness.deleteRecursively(checkpoint)
    (System.nanoTime() - started) / 1e9
  }

  /**
   * Runs `read` on a new 1-shard stream of one aggregate, deleted after, so that the readers measured next do not pay
   * for loading their clients (the connector's shaded AWS SDK, fan-out's Netty clients, raw or shaded). Returns how
   * long that took, in seconds.
   */
  def warmUpReaders(config: BenchConfig)(read: Backlog => Unit): Double = {
    val started = System.nanoTime()
    val backlog = Backlog.fill(config.copy(shards = 1, aggregates = 1))
    // With its consumers: a fan-out query's own consumer may not be deregistered yet when the read returns.
    try read(backlog)
    finally TestStreams.client.deleteStream(
        DeleteStreamRequest.builder().streamName(backlog.stream).enforceConsumerDeletion(true).build())
    (System.nanoTime() - started) / 1e9
  }

  /** What every query against the emulator sets: the stream, the endpoint, the test credentials, where to start. */
  def connectorOptions(stream: String, startingPosition: String): Map[String, String] = Map(
    "kinesis.streamName" -> stream,
    "kinesis.endpointUrl" -> KinesisMock.endpoint,
    "kinesis.region" -> TestStreams.Region,
    "kinesis.awsAccessKeyId" -> TestStreams.AccessKeyId,
    "kinesis.awsSecretKey" -> TestStreams.SecretKey,
    "kinesis.startingPosition" -> startingPosition)
}
