package io.github.sparkkinesis.bench

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.SparkSession
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest

import io.github.sparkkinesis.it.{KinesisMock, TestStreams}

/**
 * One measured write: who wrote how many rows in how long, how long the untimed priming write before it took, and what
 * was read back from the stream.
 */
final case class SinkMeasurement(
    writer: String,
    rows: Int,
    seconds: Double,
    primeSeconds: Option[Double],
    landed: Landed,
    detail: String) {
  def rowsPerSecond: Double = rows / seconds
}

/** The sink part's measurements, the baseline (the raw client over plain HTTP) first. */
final case class SinkBenchResult(measurements: Seq[SinkMeasurement]) {
  def baseline: SinkMeasurement = measurements.head
}

/**
 * Write throughput: rows of [[SinkRows]] written by the raw PutRecords client ([[RawPut]]) over plain HTTP and over
 * TLS, and by the connector's sink (`df.write.format("aws-kinesis")` in `local[2]`) through the KPL (TLS) without and
 * with aggregation and with its own PutRecords calls (`kinesis.sink.producer=PutRecords`, plain HTTP), each into a new
 * stream of `shards` shards (the emulator slows down as a shard fills), each verified by reading the stream back
 * ([[Landed]]): a write that lost a row fails the benchmark instead of reporting a figure.
 *
 * Before each timed write, the same writer writes `primeRows` rows into the same stream, untimed: for the sink this
 * starts the KPL's daemon, runs Spark's first write job and lets the KPL load the stream's shard map (until it has, the
 * KPL sends every row on its own, unaggregated); for the raw client it warms up the JIT and the emulator. The timed
 * write then writes the next `rows` row numbers.
 */
object SinkBench {

  /**
   * One way the sink writes: `extra` options over the write's own, and whether its rows are aggregated (then
   * `aggregatedRows` of them are written).
   */
  private final case class SinkMode(label: String, extra: Map[String, String], aggregated: Boolean)

  /** Through the KPL (TLS only) without and with aggregation, then the sink's own PutRecords calls over plain HTTP. */
  private def modes: Seq[SinkMode] = Seq(
    SinkMode(s"$tls, aggregation off", Map.empty, aggregated = false),
    SinkMode(s"$tls, aggregation on", Map.empty, aggregated = true),
    SinkMode(
      "HTTP, kinesis.sink.producer=PutRecords",
      Map("kinesis.sink.producer" -> "PutRecords", "kinesis.endpointUrl" -> KinesisMock.endpoint),
      aggregated = false))

  /**
   * With bench/run's `BENCH_FRONT=1`, the emulator's own TLS port (the benchmark's is continue-front.py's): the raw
   * client writes through it too, so that the front's own cost shows in the same run.
   */
  private val emulatorTlsPort = sys.env.get("KINESIS_MOCK_EMULATOR_TLS_PORT")

  /** What the sink's and the raw TLS client's writes go through. */
  private def tls: String = if (emulatorTlsPort.isDefined) "TLS front" else "TLS"

  private def emulatorTls: Seq[(String, KinesisClient)] =
    emulatorTlsPort.toSeq.map(port => "TLS direct" -> RawPut.tlsClientOf(s"https://127.0.0.1:$port"))

  def run(spark: SparkSession, config: SinkConfig, log: String => Unit): SinkBenchResult = {
    val streams = ArrayBuffer.empty[String]
    def newStream(): String = {
      val stream = TestStreams.createStream("bench-sink", config.shards)
      streams += stream
      stream
    }
    // Deleted at the end, not after each write: the KPL keeps refreshing the shard maps of the streams it wrote
    // to, and logs every failure at length.
    try {
      val raws = (Seq("HTTP" -> TestStreams.client, tls -> RawPut.tlsClient) ++ emulatorTls).map {
        case (protocol, client) =>
          measure(s"raw PutRecords, ${config.rawThreads} threads, $protocol", newStream(), config.rows, config, log) {
            stream =>
              val prime = primed(config)(RawPut.run(client, stream, 0, config.primeRows, config))
              val result = RawPut.run(client, stream, config.primeRows, config.primeRows + config.rows, config)
              (result.seconds, prime, s"${result.calls} PutRecords calls, ${result.retriedEntries} entries sent again")
          }
      }
      val sinks = modes.map { mode =>
        val rows = if (mode.aggregated) config.aggregatedRows else config.rows
        measure(s"sink local[2], ${mode.label}", newStream(), rows, config, log) { stream =>
          val prime = primed(config)(write(spark, stream, 0, config.primeRows, mode, config))
          val taskTimes = TaskTimes.start(spark.sparkContext)
          val seconds = timed(write(spark, stream, config.primeRows, config.primeRows + rows, mode, config))
          (seconds, prime, taskTimes.stop())
        }
      }
      SinkBenchResult(raws ++ sinks)
    } finally streams.foreach { stream =>
        TestStreams.client.deleteStream(DeleteStreamRequest.builder().streamName(stream).build())
      }
  }

  /**
   * The connector options of a sink write into `stream`: the emulator's TLS port, `connections` (when given) as the
   * producer's most requests in flight, `extra` (a mode's), then the configured options. The throughput writes pass the
   * raw client's thread count: the emulator serves one request at a time, and the KPL's default 24 requests of up to
   * 500 records in flight queue there for longer than its 6-s request timeout under load, after which it sends them all
   * again.
   */
  def options(
      stream: String,
      aggregation: Boolean,
      config: SinkConfig,
      connections: Option[Int] = None,
      extra: Map[String, String] = Map.empty): Map[String, String] = connections.map { n =>
    "kinesis.sink.maxConnections" -> n.toString
  }.toMap ++ Map(
    "kinesis.streamName" -> stream,
    "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
    "kinesis.verifyCertificate" -> "false",
    "kinesis.region" -> TestStreams.Region,
    "kinesis.awsAccessKeyId" -> TestStreams.AccessKeyId,
    "kinesis.awsSecretKey" -> TestStreams.SecretKey,
    "kinesis.sink.aggregationEnabled" -> aggregation.toString) ++ extra ++ config.options

  /** Runs the priming write, if there is one, and returns how long it took. */
  private def primed(config: SinkConfig)(write: => Unit): Option[Double] =
    if (config.primeRows == 0) None else Some(timed(write))

  /**
   * Rows `from` until `end` in append mode. (Spark 3.5 and 4.x refuse the default mode, ErrorIfExists, for a DataSource
   * V2 table that supports batch writes, before the connector is asked.)
   */
  private def write(
      spark: SparkSession,
      stream: String,
      from: Int,
      end: Int,
      mode: SinkMode,
      config: SinkConfig): Unit =
    SinkRows.dataFrame(spark, from, end, config).write.format("aws-kinesis").mode("append")
      .options(options(stream, mode.aggregated, config, connections = Some(config.rawThreads), mode.extra))
      .save()

  /**
   * Runs `writeRows` (which returns its time, its priming write's and a detail) against `stream`, then reads the stream
   * back and fails unless all `primeRows + rows` rows are there.
   */
  private def measure(writer: String, stream: String, rows: Int, config: SinkConfig, log: String => Unit)(
      writeRows: String => (Double, Option[Double], String)): SinkMeasurement = {
    log(s"sink: $writer writing $rows rows")
    val (seconds, prime, detail) = writeRows(stream)
    log(f"sink: $writer wrote $rows rows in $seconds%.1f s (${rows / seconds}%.0f rows/s); reading them back")
    val landed = Landed.count(stream, config.primeRows + rows, config)
    if (!landed.isComplete(config.primeRows + rows)) {
      throw new IllegalStateException(s"$writer wrote ${config.primeRows + rows} rows to $stream, but reading it " +
        s"back found ${landed.distinct} distinct rows of the write and ${landed.strangers} records that are none: " +
        s"$landed")
    }
    SinkMeasurement(writer, rows, seconds, prime, landed, detail)
  }

  private def timed(f: => Unit): Double = {
    val started = System.nanoTime()
    f
    (System.nanoTime() - started) / 1e9
  }
}
