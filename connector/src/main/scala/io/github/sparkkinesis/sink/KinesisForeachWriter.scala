package io.github.sparkkinesis.sink

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.spark.sql.{ForeachWriter, Row}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.types.StructType

import io.github.sparkkinesis.options.KinesisSinkOptions

/**
 * The `aws-kinesis` sink as a `ForeachWriter`, for `df.writeStream.foreach(...)`: the sink Spark's real-time mode
 * accepts (its allowlist names `foreach`, not the Kinesis sink), so a real-time query can write to Kinesis with the
 * allowlist check on. It takes the sink's options and columns, checked with the sink's messages, and writes through the
 * sink's shared producer (the KPL and its aggregation, or PutRecords calls; PutRecord for records above 1 MiB; each
 * partition key in order).
 *
 * Each row goes to the producer as `process` receives it; `close` at the end of the task's epoch waits until Kinesis
 * has confirmed every row of the epoch and throws if one failed, so the epoch does not commit and Spark retries it. A
 * retried or replayed epoch writes its rows again: delivery is at least once, like the sink's.
 *
 * The columns are resolved when built with the DataFrame's schema, else from the first row of each task.
 *
 * @param driverColumns
 *   the columns resolved from the DataFrame's schema on the driver, if it was given
 * @param factoryFor
 *   the task writers for some columns: the sink's own in production, writers around fake producers in tests
 */
final class KinesisForeachWriter private[sink] (
    options: KinesisSinkOptions,
    driverColumns: Option[SinkColumns],
    factoryFor: SinkColumns => DataWriterFactory)
    extends ForeachWriter[Row] {

  @transient private var partition = 0
  @transient private var columns: SinkColumns = _ // the task's, resolved at its first row
  @transient private var used: Seq[Int] = _ // the columns' positions in a row
  @transient private var writer: DataWriter[InternalRow] = _ // created at the task's first row

  override def open(partitionId: Long, epochId: Long): Boolean = {
    partition = partitionId.toInt
    true
  }

  override def process(row: Row): Unit = {
    if (writer == null) start(row)
    writer.write(internal(row))
  }

  /** With no error, waits until Kinesis confirmed every row of the task (throwing if one failed); always lets go. */
  override def close(errorOrNull: Throwable): Unit = {
    val current = writer
    writer = null // Spark may call close again after a failed process or close: the second call has nothing to do
    if (current != null) {
      try if (errorOrNull == null) current.commit() else current.abort()
      finally current.close()
    }
  }

  override def toString: String = s"KinesisForeachWriter[$options]"

  /** Finds the columns (those given, or the row's) and takes a writer of the executor's shared producer. */
  private def start(row: Row): Unit = {
    if (columns == null) {
      columns = driverColumns.getOrElse {
        val schema = Option(row.schema).getOrElse(throw new IllegalArgumentException("KinesisForeachWriter got a " +
          "row without a schema; use it with a DataFrame's writeStream.foreach, or build it with the DataFrame's " +
          "schema: KinesisForeachWriter(options, df.schema)."))
        SinkColumns.resolve(schema, options.stream)
      }
      used = Seq(columns.data, columns.partitionKey) ++ columns.explicitHashKey ++ columns.streamName
    }
    writer = factoryFor(columns).createWriter(partition, 0L)
  }

  /** The sink's columns of `row` as Spark's internal values; the writer reads no other column. */
  private def internal(row: Row): InternalRow = {
    val values = new Array[Any](row.length)
    used.foreach(i => values(i) = CatalystTypeConverters.convertToCatalyst(row.get(i)))
    new GenericInternalRow(values)
  }
}

/**
 * Builds [[KinesisForeachWriter]]s. The options are parsed and checked here, on the driver, as the `aws-kinesis` sink
 * checks them when a query starts, and so is the stream named by `kinesis.streamName`.
 *
 * {{{
 * df.selectExpr("data", "partitionKey").writeStream
 *   .foreach(KinesisForeachWriter(Map("kinesis.streamName" -> "alerts", "kinesis.region" -> "eu-west-1")))
 *   .outputMode("update").option("checkpointLocation", dir).trigger(Trigger.RealTime("5 minutes")).start()
 * }}}
 */
object KinesisForeachWriter {

  /** A writer with the sink's `options`; the columns are checked at each task's first row. */
  def apply(options: Map[String, String]): KinesisForeachWriter = {
    val parsed = KinesisSinkOptions.parse(options)
    KinesisWrite.checkStream(parsed)
    new KinesisForeachWriter(parsed, None, KinesisDataWriterFactory.of(parsed, _))
  }

  /** A writer with the sink's `options` for rows of `schema` (the DataFrame's), whose columns are checked now. */
  def apply(options: Map[String, String], schema: StructType): KinesisForeachWriter = {
    val parsed = KinesisSinkOptions.parse(options)
    val columns = KinesisWrite.checkedColumns(parsed, schema)
    new KinesisForeachWriter(parsed, Some(columns), KinesisDataWriterFactory.of(parsed, _))
  }

  /** [[apply]] for Java (and Python through Py4J). */
  def create(options: java.util.Map[String, String]): KinesisForeachWriter = apply(options.asScala.toMap)

  /** [[apply]] with the DataFrame's schema, for Java (and Python through Py4J). */
  def create(options: java.util.Map[String, String], schema: StructType): KinesisForeachWriter =
    apply(options.asScala.toMap, schema)
}
