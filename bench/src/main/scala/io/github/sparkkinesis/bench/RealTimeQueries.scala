package io.github.sparkkinesis.bench

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue}
import java.util.concurrent.atomic.AtomicLong

import scala.collection.JavaConverters._

import org.apache.spark.sql.{DataFrame, ForeachWriter, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryProgress, Trigger}

/**
 * What the real-time part needs beside the other parts: `Trigger.RealTime` (Spark 4.1+, looked up by name so that the
 * benchmark still compiles against Spark 3.5 and 4.0) and `foreach` sinks, the only kind of sink besides console,
 * memory and Kafka that Spark's real-time mode accepts. The sinks run in the driver's JVM (`local[2]`), so they hand
 * what they saw to the benchmark through [[RealTimeQueries.Collected]], under a key of their run.
 */
object RealTimeQueries {

  /** `Trigger.RealTime(duration)`: real-time batches of `duration` (the checkpoint interval), such as "5 minutes". */
  def realTime(duration: String): Trigger =
    try classOf[Trigger].getMethod("RealTime", classOf[String]).invoke(null, duration).asInstanceOf[Trigger]
    catch {
      case _: NoSuchMethodException => throw new IllegalStateException(
          s"this Spark (${org.apache.spark.SPARK_VERSION}) has no Trigger.RealTime: the realtime part needs Spark " +
            "4.1 or later (bench/run --scala 2.13)")
    }

  /** What one run's sink saw: each row's partition key and latency, or only a count; first and last row times. */
  final class Collected {
    val rows = new ConcurrentLinkedQueue[(String, Long)]()
    val count = new AtomicLong()
    val firstRowNanos = new AtomicLong()
    val lastRowNanos = new AtomicLong()
  }

  private val runs = new ConcurrentHashMap[String, Collected]()

  /** A new run's key and what its sink will collect. */
  def newRun(): (String, Collected) = {
    val key = UUID.randomUUID().toString
    val collected = new Collected
    runs.put(key, collected)
    key -> collected
  }

  def endRun(key: String): Unit = runs.remove(key)

  /**
   * Takes, for every row of (`partitionKey`, `data`), `now - data` (data: the send time in epoch milliseconds) when the
   * task hands the row to the sink; rows whose data is not a number (warm-up rows) get -1.
   */
  final class LatencyWriter(run: String) extends ForeachWriter[Row] {
    @transient private var collected: Collected = _

    override def open(partitionId: Long, epochId: Long): Boolean = { collected = runs.get(run); true }

    override def process(row: Row): Unit = {
      val now = System.currentTimeMillis()
      val payload = new String(row.getAs[Array[Byte]](1), UTF_8)
      val latency = if (payload.nonEmpty && payload.forall(_.isDigit)) now - payload.toLong else -1L
      collected.rows.add(row.getString(0) -> latency)
      collected.count.incrementAndGet()
    }

    override def close(errorOrNull: Throwable): Unit = ()
  }

  /** Counts rows, noting when the first and the latest arrived; it keeps nothing else, for large backlogs. */
  final class CountingWriter(run: String) extends ForeachWriter[Row] {
    @transient private var collected: Collected = _

    override def open(partitionId: Long, epochId: Long): Boolean = { collected = runs.get(run); true }

    override def process(row: Row): Unit = {
      val now = System.nanoTime()
      collected.firstRowNanos.compareAndSet(0L, now)
      collected.count.incrementAndGet()
      collected.lastRowNanos.set(now)
    }

    override def close(errorOrNull: Throwable): Unit = ()
  }

  /** `df`'s partition key and data written to `writer`, with `trigger` (None: the default micro-batch trigger). */
  def start(df: DataFrame, writer: ForeachWriter[Row], checkpoint: String, trigger: Option[Trigger]): StreamingQuery = {
    val w = df.select("partitionKey", "data").writeStream.foreach(writer).option("checkpointLocation", checkpoint)
    // Real-time mode refuses the default Append output mode (STREAMING_REAL_TIME_MODE.OUTPUT_MODE_NOT_SUPPORTED);
    // Update means the same for a query without aggregation.
    trigger.fold(w)(t => w.trigger(t).outputMode("update")).start()
  }

  /** GetRecords calls of the tasks and the driver's checks in `reports`, as the source's progress metrics give them. */
  def getRecordsCalls(reports: Seq[StreamingQueryProgress]): Double =
    reports.flatMap(_.sources.headOption.toSeq).map { source =>
      Seq("getRecordsCalls", "driverGetRecordsCalls").flatMap(k => Option(source.metrics.get(k))).map(_.toDouble).sum
    }.sum

  /** The time `report`'s batch ran, in milliseconds (a real-time batch's whole duration). */
  def batchMs(report: StreamingQueryProgress): Long =
    Option(report.durationMs.get("triggerExecution")).map(_.longValue).getOrElse(0L)

  /** When `report`'s batch ended, in epoch milliseconds. */
  def endedMs(report: StreamingQueryProgress): Long =
    java.time.Instant.parse(report.timestamp).toEpochMilli + batchMs(report)
}
