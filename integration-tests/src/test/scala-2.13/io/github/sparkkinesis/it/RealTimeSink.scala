package io.github.sparkkinesis.it

import java.io.{File, FileOutputStream, OutputStreamWriter, Writer}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.UUID
import java.util.concurrent.atomic.AtomicLong

import scala.collection.JavaConverters._

import org.apache.spark.sql.{DataFrame, ForeachWriter, Row}
import org.apache.spark.sql.streaming.{DataStreamWriter, Trigger}

/**
 * What real-time tests need that micro-batch ones do not: `Trigger.RealTime` (Spark 4.1+; looked up by name so these
 * tests compile against Spark 4.0 too) and a sink real-time mode accepts (`foreach`), made idempotent by the check:
 * every row is appended to a file of its task at once, with when it was written, and [[RealTimeSink.rows]] reads them
 * all back, duplicates included, for the test to count.
 */
object RealTimeSink {

  /** `Trigger.RealTime(duration)`: a real-time batch of `duration` (checkpoint interval), such as "5 seconds". */
  def trigger(duration: String): Trigger =
    classOf[Trigger].getMethod("RealTime", classOf[String]).invoke(null, duration).asInstanceOf[Trigger]

  /** `df` written in real-time mode into files under `dir`, one per task and batch, taking `rowMs` per row. */
  def writeTo(df: DataFrame, dir: String, batch: String, checkpoint: String, rowMs: Long = 0L): DataStreamWriter[Row] =
    df.selectExpr(
      "partitionKey",
      "CAST(data AS STRING) AS payload",
      "shardId",
      "sequenceNumber",
      "subSequenceNumber",
      "streamName",
      "CAST(approximateArrivalTimestamp AS DOUBLE) * 1000 AS arrivalMs").writeStream
      .foreach(new LineWriter(dir, rowMs))
      .outputMode("update") // the only output mode real-time mode accepts
      .option("checkpointLocation", checkpoint)
      .trigger(trigger(batch))

  /** Every row written under `dir`, in the order each JVM wrote them (`order`), duplicates included. */
  def rows(dir: String): Seq[SinkRow] = {
    val files = Option(new File(dir).listFiles()).toSeq.flatten.filter(_.getName.endsWith(".tsv"))
    files.flatMap(f => Files.readAllLines(f.toPath, UTF_8).asScala.filter(_.nonEmpty).map(SinkRow.parse))
      .sortBy(_.order)
  }

  /** A global write counter of this JVM: the order rows were handed to the sink in, across tasks. */
  private[it] val order = new AtomicLong()
}

/** One row as the real-time test sink wrote it. */
final case class SinkRow(
    partitionKey: String,
    payload: String,
    shardId: String,
    sequenceNumber: String,
    subSequenceNumber: Long,
    stream: String,
    arrivalMs: Long,
    writtenMs: Long,
    order: Long) {

  /** The source record's identity in the query: its stream, shard and position in the shard. */
  def position: (String, String, String, Long) = (stream, shardId, sequenceNumber, subSequenceNumber)
}

object SinkRow {
  def parse(line: String): SinkRow = {
    val f = line.split("\t", -1)
    SinkRow(f(0), f(1), f(2), f(3), f(4).toLong, f(5), f(6).toDouble.toLong, f(7).toLong, f(8).toLong)
  }
}

/**
 * Appends each row to a file of its own task attempt, flushed at once, so a SIGKILL loses nothing written; a slow sink
 * takes `rowMs` more per row.
 */
final class LineWriter(dir: String, rowMs: Long = 0L) extends ForeachWriter[Row] {
  @transient private var out: Writer = _

  override def open(partitionId: Long, epochId: Long): Boolean = {
    new File(dir).mkdirs()
    val file = new File(dir, s"part-$partitionId-$epochId-${UUID.randomUUID()}.tsv")
    out = new OutputStreamWriter(new FileOutputStream(file), UTF_8)
    true
  }

  override def process(row: Row): Unit = {
    val fields = (0 until row.length).map(i => String.valueOf(row.get(i))) ++
      Seq(System.currentTimeMillis().toString, RealTimeSink.order.incrementAndGet().toString)
    out.write(fields.mkString("", "\t", "\n"))
    out.flush()
    if (rowMs > 0) Thread.sleep(rowMs) // the sink's own pace
  }

  override def close(errorOrNull: Throwable): Unit = if (out != null) out.close()
}
