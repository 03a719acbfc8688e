package io.github.sparkkinesis.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{
  BatchWrite,
  DataWriter,
  DataWriterFactory,
  LogicalWriteInfo,
  PhysicalWriteInfo,
  SupportsTruncate,
  Write,
  WriteBuilder,
  WriterCommitMessage
}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import org.apache.spark.sql.types.StructType
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.SparkThreadsClassLoading
import io.github.sparkkinesis.metrics.{MetricNames, WriteMetrics}
import io.github.sparkkinesis.options.{KinesisOptionsRegistry, KinesisSinkOptions}

/**
 * Plans a write of `info`'s rows to Kinesis. The columns are checked here, when Spark analyses the write, and so is the
 * stream named by `kinesis.streamName`, which then takes every row. A streaming query in update mode (the
 * qubole/roncemer connector's example uses it) appends each updated row, as Spark's Kafka sink does. A write that would
 * first remove the stream's records (an overwrite, complete output mode) asks to truncate, which is refused in words.
 */
final class KinesisWriteBuilder(options: KinesisSinkOptions, info: LogicalWriteInfo)
    extends WriteBuilder with SupportsStreamingUpdateAsAppend with SupportsTruncate {

  override def build(): Write =
    new KinesisWrite(options, KinesisWrite.checkedColumns(options, info.schema()), MetricNames.currentQuery())

  override def truncate(): WriteBuilder = throw new UnsupportedOperationException(KinesisWriteBuilder.OverwriteRefused)
}

object KinesisWriteBuilder {

  /** Why a write that replaces a stream's records is refused, and what to use instead. */
  val OverwriteRefused: String =
    "An aws-kinesis table or sink cannot be overwritten (INSERT OVERWRITE, insertInto in overwrite mode, a " +
      "streaming query's complete output mode): a Kinesis stream is append-only, its records are never " +
      "removed. Use INSERT INTO or append mode (update mode for a streaming aggregation)."
}

/**
 * A batch or streaming write to Kinesis; every task writes its rows through its executor's shared producer and counts
 * them in the metrics of `query` (the streaming query that writes, or `batch`).
 */
private[sink] final class KinesisWrite(options: KinesisSinkOptions, columns: SinkColumns, query: String)
    extends Write with BatchWrite with StreamingWrite {
  private val log = LoggerFactory.getLogger(getClass)

  private val factory =
    KinesisDataWriterFactory.of(options, columns, query, commitCounts = SparkThreadsClassLoading.connectorLoads())

  override def description(): String = s"KinesisWrite[$options]"

  override def toBatch: BatchWrite = this

  // Rows are in Kinesis before a task commits, so arbitrating between attempts of one task would change nothing.
  override def useCommitCoordinator(): Boolean = false

  override def toStreaming: StreamingWrite = this

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = factory

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory = factory

  override def commit(messages: Array[WriterCommitMessage]): Unit = logWritten("The write", messages)

  override def abort(messages: Array[WriterCommitMessage]): Unit = ()

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    logWritten(s"Micro-batch $epochId", messages)

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = ()

  private def logWritten(what: String, messages: Array[WriterCommitMessage]): Unit = {
    val committed = messages.collect { case m: KinesisWriterCommitMessage => m }
    if (committed.length < messages.length) log.info(s"$what committed ${messages.length} tasks to Kinesis")
    else log.info(s"$what wrote ${committed.map(_.records).sum} rows (${committed.map(_.bytes).sum} bytes) to Kinesis")
  }
}

private[sink] object KinesisWrite {
  val ConfirmMarginMs = 30000L

  /**
   * The sink's columns in `schema`, after checking that the stream named by option kinesis.streamName (when set) can be
   * written to; fails with a message naming the column or the stream otherwise. Runs on the driver, before any task.
   */
  def checkedColumns(options: KinesisSinkOptions, schema: StructType): SinkColumns = {
    val columns = SinkColumns.resolve(schema, options.stream)
    checkStream(options)
    columns
  }

  /** Fails, naming the stream, when option kinesis.streamName is set and that stream cannot be written to. */
  def checkStream(options: KinesisSinkOptions): Unit =
    options.stream.foreach(StreamCheck.shared.maxRecordBytes(options.client, _))

  /**
   * How long a task waits for its rows' confirmation with option kinesis.sink.recordTtl `recordTtlMs`: every record
   * ends by its producer's TTL (the KPL is given at most [[KplProducer.MaxRecordTtlMs]], so no sum overflows, and no
   * wait longer than that helps a task); the margin covers the producer's own bookkeeping.
   */
  def confirmTimeoutMs(recordTtlMs: Long): Long = KplProducer.recordTtlForKpl(recordTtlMs) + ConfirmMarginMs
}

/**
 * Creates each task's [[KinesisDataWriter]] on the executor, around that executor's shared producer; its rows count in
 * the executor's metrics of `query` ([[WriteMetrics]]). With `commitCounts` false, tasks commit with no message (see
 * [[KinesisDataWriter]]).
 */
private[sink] final class KinesisDataWriterFactory(
    columns: SinkColumns,
    val settings: ProducerSettings,
    limits: WriterLimits,
    query: String,
    commitCounts: Boolean)
    extends DataWriterFactory with StreamingDataWriterFactory {

  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new KinesisDataWriter(
      columns,
      SharedProducers.pool.acquire(settings),
      limits,
      maxRecordBytes = StreamCheck.shared.maxRecordBytes(settings.client, _),
      metrics = WriteMetrics.of(query, _),
      commitCounts = commitCounts)

  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    createWriter(partitionId, taskId)
}

private[sink] object KinesisDataWriterFactory {

  /**
   * The factory for a write of `columns` with the sink's `options`, counted for `query`: its producer settings and its
   * tasks' limits; its tasks' commit messages carry their counts unless `commitCounts` is false.
   */
  def of(
      options: KinesisSinkOptions,
      columns: SinkColumns,
      query: String = MetricNames.BatchQuery,
      commitCounts: Boolean = true): KinesisDataWriterFactory =
    new KinesisDataWriterFactory(
      columns,
      ProducerSettings(
        options.client,
        options.recordMaxBufferedTimeMs,
        options.maxConnections,
        options.aggregationEnabled,
        options.recordTtlMs,
        options.maxPendingRecordsPerExecutor,
        options.maxPendingBytesPerExecutor,
        options.strictKeyOrder,
        options.putRecords),
      WriterLimits(
        confirmTimeoutMs = KinesisWrite.confirmTimeoutMs(options.recordTtlMs),
        maxPendingRecords = KinesisOptionsRegistry.SinkMaxPendingRecordsPerTask,
        maxPendingBytes = KinesisOptionsRegistry.SinkMaxPendingBytesPerTask),
      query,
      commitCounts)
}
