package io.github.sparkkinesis.bench

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, Executors, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong, AtomicReference}

import scala.collection.JavaConverters._
import scala.concurrent.duration._
import scala.util.control.NonFatal

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordRequest

import io.github.sparkkinesis.it.{Eventually, QueryChecks, SparkHarness, TestStreams}

/** Put-to-sink latencies in milliseconds, with how many records were sent and how long the puts took. */
final case class LatencyResult(
    stream: String,
    sent: Int,
    latenciesMs: Seq[Long],
    putCallMs: Seq[Long],
    batches: Int,
    progress: Progress,
    tasks: String,
    getRecordsPerShardPerSecond: Double)

/**
 * Put-to-sink latency with a steady producer: one small record every `latencyIntervalMs` carrying its send time (epoch
 * milliseconds: producer and sink share this machine's clock, not a JVM's nanoTime), read by a query with the default
 * trigger whose `foreachBatch` sink takes `now - sent` for every row once it has collected the batch.
 */
object LatencyBench {

  private val WarmUpPrefix = "warm-up:"
  private val WarmUpTimeout = 2.minutes
  private val DeliveryTimeout = 60.seconds

  def run(spark: SparkSession, config: BenchConfig): LatencyResult = {
    val stream = TestStreams.createStream("bench-latency", config.latencyShards)
    val checkpoint = SparkHarness.newTempDir("bench-latency-checkpoint-")
    val latencies = new ConcurrentLinkedQueue[java.lang.Long]()
    val warmUps = new AtomicInteger()
    val batches = new AtomicInteger()
    val sink: (DataFrame, Long) => Unit = (batch, _) => {
      val rows = batch.select("data").collect()
      val now = System.currentTimeMillis()
      batches.incrementAndGet()
      rows.foreach { row => record(row, now, latencies, warmUps) }
    }
    val query = spark.readStream.format("aws-kinesis")
      .options(BenchStreams.connectorOptions(stream, "TRIM_HORIZON") ++ config.latencyOptions)
      .load()
      .writeStream
      .option("checkpointLocation", checkpoint.getAbsolutePath)
      .foreachBatch(sink)
      .start()
    try {
      // Until a record has gone through, the query is still starting: that is not the latency measured here.
      var warmUpsSent = 0
      Eventually.await("a warm-up record to reach the sink", WarmUpTimeout, s"$warmUpsSent warm-up records sent") {
        QueryChecks.failIfStopped(query)
        if (warmUps.get() == 0) {
          put(stream, s"warm-up-$warmUpsSent", WarmUpPrefix + System.currentTimeMillis())
          warmUpsSent += 1
          Thread.sleep(500)
        }
        warmUps.get() > 0
      }
      val batchesBefore = batches.get()
      val taskTimes = TaskTimes.start(spark.sparkContext)
      val measuredFrom = java.time.Instant.now()
      val (sent, putCallMs) = produce(stream, config)
      Eventually.await(s"all $sent records to reach the sink", DeliveryTimeout, s"${latencies.size} arrived") {
        QueryChecks.failIfStopped(query)
        latencies.size >= sent
      }
      val seconds = (System.currentTimeMillis() - measuredFrom.toEpochMilli) / 1000.0
      val reports = query.recentProgress.toSeq.filter(p => !java.time.Instant.parse(p.timestamp).isBefore(measuredFrom))
      LatencyResult(
        stream,
        sent,
        latencies.asScala.map(_.longValue).toVector,
        putCallMs,
        batches.get() - batchesBefore,
        Progress.summarize(query.recentProgress.toSeq.filter(p => p.batchId >= batchesBefore && p.numInputRows > 0)),
        taskTimes.stop(),
        getRecordsCalls(reports) / seconds / config.latencyShards)
    } finally {
      query.stop()
      SparkHarness.deleteRecursively(checkpoint)
    }
  }

  /** GetRecords calls of the tasks and the driver's checks, as the source's progress metrics report them. */
  private def getRecordsCalls(reports: Seq[org.apache.spark.sql.streaming.StreamingQueryProgress]): Double =
    reports.flatMap(_.sources.headOption.toSeq).map { source =>
      Seq("getRecordsCalls", "driverGetRecordsCalls").flatMap(k => Option(source.metrics.get(k))).map(_.toDouble).sum
    }.sum

  private def record(
      row: Row,
      now: Long,
      latencies: ConcurrentLinkedQueue[java.lang.Long],
      warmUps: AtomicInteger): Unit = {
    val payload = new String(row.getAs[Array[Byte]](0), UTF_8)
    if (payload.startsWith(WarmUpPrefix)) warmUps.incrementAndGet()
    else latencies.add(now - payload.toLong)
  }

  /** Puts one record every interval for the configured time; returns how many and how long each PutRecord took. */
  private[bench] def produce(stream: String, config: BenchConfig): (Int, Seq[Long]) = {
    val count = config.latencySeconds * 1000 / config.latencyIntervalMs
    val putCallMs = new ConcurrentLinkedQueue[java.lang.Long]()
    val next = new AtomicLong()
    val scheduler = Executors.newSingleThreadScheduledExecutor()
    val done = new CountDownLatch(count)
    val failure = new AtomicReference[Throwable]()
    scheduler.scheduleAtFixedRate(
      new Runnable {
        override def run(): Unit = {
          val i = next.getAndIncrement()
          if (i < count && failure.get() == null) {
            try {
              val sentAt = System.currentTimeMillis()
              put(stream, s"key-$i", sentAt.toString)
              putCallMs.add(System.currentTimeMillis() - sentAt)
              done.countDown()
            } catch {
              case NonFatal(e) =>
                failure.compareAndSet(null, e)
                while (done.getCount > 0) done.countDown() // no point waiting for the rest
            }
          }
        }
      },
      0L,
      config.latencyIntervalMs.toLong,
      TimeUnit.MILLISECONDS)
    try {
      val limitSeconds = config.latencySeconds + 60L
      val finished = done.await(limitSeconds, TimeUnit.SECONDS)
      Option(failure.get()).foreach(e => throw new IllegalStateException(s"PutRecord into $stream failed: $e", e))
      if (!finished) {
        throw new IllegalStateException(s"the producer put only ${count - done.getCount} of $count records into " +
          s"$stream within $limitSeconds s")
      }
    } finally scheduler.shutdownNow()
    (count, putCallMs.asScala.map(_.longValue).toVector)
  }

  private def put(stream: String, key: String, payload: String): Unit =
    TestStreams.client.putRecord(PutRecordRequest.builder()
      .streamName(stream).partitionKey(key).data(SdkBytes.fromString(payload, UTF_8)).build())
}
