package io.github.sparkkinesis.bench

import java.util.concurrent.{Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicReference

import scala.concurrent.duration._
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.{col, concat, lit, udf}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{DeleteStreamRequest, PutRecordsRequestEntry}

import io.github.sparkkinesis.it.{Eventually, KinesisMock, QueryChecks, SparkHarness, TestStreams}

/**
 * One streaming writer's latencies in ms, sorted (row stamped to its record's arrival in Kinesis, and to the reader
 * seeing it), and how its rows were packed.
 */
final case class SinkLatency(
    writer: String,
    arrivalMs: Seq[Long],
    readMs: Seq[Long],
    rows: Long,
    kinesisRecords: Long) {
  def rowsPerRecord: Double = if (kinesisRecords == 0) 0.0 else rows.toDouble / kinesisRecords
}

/**
 * Streaming-write latency: a query with the default trigger writes Spark's `rate` source (`rowsPerSecond`) to a new
 * stream through the sink (through the KPL, with aggregation; then with `kinesis.sink.producer=PutRecords`), each row's
 * data stamped with the epoch milliseconds at which the write task evaluates it, just before it hands the row to the
 * sink; a [[StreamTail]] reads the stream and takes `read - stamp` (and Kinesis's arrival timestamp - stamp). The
 * baseline is a raw PutRecords client writing the same rate into another new stream: every 100 ms (the KPL's default
 * buffering time) the rows due, stamped then, go to a pool of `rawThreads` callers. Rows stamped in the first
 * `warmUpSeconds` (the query's start, the KPL's daemon and shard map) are not counted.
 */
object SinkLatencyBench {

  private val PollMs = 20L
  private val RawBatchMs = 100L
  private val DeliveryTimeout = 60.seconds

  def run(spark: SparkSession, config: SinkConfig, log: String => Unit): Seq[SinkLatency] = {
    val streams = Seq.fill(3)(TestStreams.createStream("bench-sink-latency", config.latencyShards))
    try Seq(
        sink(spark, streams.head, config, log, "sink, streaming, aggregation on", aggregation = true),
        sink(spark, streams(1), config, log, "sink, streaming, PutRecords", aggregation = false, PutRecordsOverHttp),
        raw(streams(2), config, log))
    finally streams.foreach { s =>
        TestStreams.client.deleteStream(DeleteStreamRequest.builder().streamName(s).build())
      }
  }

  /** The sink's own PutRecords calls (`kinesis.sink.producer=PutRecords`), to the emulator's plain HTTP port. */
  private val PutRecordsOverHttp =
    Map("kinesis.sink.producer" -> "PutRecords", "kinesis.endpointUrl" -> KinesisMock.endpoint)

  private def sink(
      spark: SparkSession,
      stream: String,
      config: SinkConfig,
      log: String => Unit,
      writer: String,
      aggregation: Boolean,
      extra: Map[String, String] = Map.empty): SinkLatency = {
    val tail = new StreamTail(stream, PollMs)
    val checkpoint = SparkHarness.newTempDir("bench-sink-latency-")
    val stamp = udf((id: Long) => s"${System.currentTimeMillis()}:$id").asNondeterministic()
    val started = System.currentTimeMillis()
    val query = spark.readStream.format("rate").option("rowsPerSecond", config.latencyRowsPerSecond.toString)
      .option("numPartitions", config.partitions.toString).load()
      .select(
        stamp(col("value")).as("data"),
        concat(lit("key-"), (col("value") % config.keys).cast("string"))
          .as("partitionKey"))
      .writeStream.format("aws-kinesis").options(SinkBench.options(stream, aggregation, config, extra = extra))
      .option("checkpointLocation", checkpoint.getAbsolutePath).start()
    log(s"sink latency: $writer writing ${config.latencyRowsPerSecond} rows/s for ${config.latencySeconds} s " +
      s"after ${config.latencyWarmUpSeconds} s of warm-up")
    try {
      Eventually.await(
        "the streaming write to run its time",
        (config.latencyWarmUpSeconds + config.latencySeconds +
          60).seconds) {
        QueryChecks.failIfStopped(query)
        tail.check()
        System.currentTimeMillis() - started >= (config.latencyWarmUpSeconds + config.latencySeconds) * 1000L
      }
    } finally {
      query.stop()
      SparkHarness.deleteRecursively(checkpoint)
    }
    settle(writer, tail, started + config.latencyWarmUpSeconds * 1000L)
  }

  private def raw(stream: String, config: SinkConfig, log: String => Unit): SinkLatency = {
    val tail = new StreamTail(stream, PollMs)
    val ticker = Executors.newSingleThreadScheduledExecutor()
    // Calls go to a pool, so that one slow call does not hold back the rows due after it.
    val callers = Executors.newFixedThreadPool(config.rawThreads)
    val failure = new AtomicReference[Throwable]()
    val started = System.currentTimeMillis()
    var stamped = 0L // only the ticker's thread uses it
    log(s"sink latency: raw PutRecords writing ${config.latencyRowsPerSecond} rows/s")
    ticker.scheduleAtFixedRate(
      new Runnable {
        override def run(): Unit = {
          val due = (System.currentTimeMillis() - started) * config.latencyRowsPerSecond / 1000
          (stamped until due).grouped(500).foreach { ids =>
            val entries = ids.map { id =>
              PutRecordsRequestEntry.builder().partitionKey(s"key-${id % config.keys}")
                .data(SdkBytes.fromUtf8String(s"${System.currentTimeMillis()}:$id")).build()
            }.toVector
            callers.submit(new Runnable {
              override def run(): Unit =
                try RawPut.put(TestStreams.client, stream, entries)
                catch {
                  case NonFatal(e) => failure.compareAndSet(null, e)
                }
            })
          }
          stamped = math.max(stamped, due)
        }
      },
      0L,
      RawBatchMs,
      TimeUnit.MILLISECONDS)
    try {
      Eventually.await(
        "the raw writer to run its time",
        (config.latencyWarmUpSeconds + config.latencySeconds +
          60).seconds) {
        Option(failure.get()).foreach(e => throw new IllegalStateException(s"PutRecords into $stream failed: $e", e))
        tail.check()
        System.currentTimeMillis() - started >= (config.latencyWarmUpSeconds + config.latencySeconds) * 1000L
      }
    } finally {
      ticker.shutdownNow()
      callers.shutdown()
      callers.awaitTermination(60, TimeUnit.SECONDS)
    }
    settle(s"raw PutRecords, ${config.rawThreads} threads", tail, started + config.latencyWarmUpSeconds * 1000L)
  }

  /**
   * Waits until the tail has read everything the writer, stopped now, wrote (a round started a second after the stop,
   * beyond the KPL's buffering time, found every shard at its tip), then keeps the rows stamped after `measuredFrom`.
   */
  private def settle(writer: String, tail: StreamTail, measuredFrom: Long): SinkLatency = {
    val stopped = System.currentTimeMillis()
    Eventually.await(s"$writer: the reader to reach the stream's tip", DeliveryTimeout) {
      tail.check()
      tail.caughtUpSince(stopped + 1000L)
    }
    val (rows, _) = tail.stop()
    val measured = rows.filter(_.stampedMs >= measuredFrom)
    SinkLatency(
      writer,
      measured.map(r => r.arrivedMs - r.stampedMs).sorted,
      measured.map(r => r.readMs - r.stampedMs).sorted,
      measured.size.toLong,
      measured.map(_.kinesisRecord).distinct.size.toLong)
  }
}
