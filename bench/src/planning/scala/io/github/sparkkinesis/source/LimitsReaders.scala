package io.github.sparkkinesis.source

import java.nio.file.Files
import java.util.concurrent.{Callable, Executors}
import java.util.concurrent.atomic.AtomicLong

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader}
import org.apache.spark.sql.connector.read.streaming.Offset

import io.github.sparkkinesis.client.{IteratorStart, LimitedKinesis, ThrottledException}
import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.reading.ReaderSettings
import io.github.sparkkinesis.source.realtime.{RealTimePartition, RealTimeRows}

/**
 * The readers of the limits benchmark, each draining a [[LimitedKinesis]] backlog from TRIM_HORIZON and counting the
 * rows it hands over, turned into Spark's UnsafeRows as a scan's projection turns them: a plain GetRecords reader that
 * keeps to the limits (no rows: the fake's own cost and the limits' pace), the connector's micro-batch driver and tasks
 * on `cores` task slots, and its real-time tasks (one per slot, as the driver plans them), polling or fan-out. The
 * connector is driven as Spark drives it, without Spark: the stream plans, the tasks' readers read.
 */
private[source] object LimitsReaders {

  /** A source stream of the benchmark: the micro-batch stream, with its real-time planning and settings in reach. */
  private final class BenchStream(options: KinesisSourceOptions, kinesis: LimitedKinesis, cores: Int)
      extends KinesisMicroBatchStream(
        options,
        Files.createTempDirectory("limits").toString,
        new Configuration(),
        _ => kinesis,
        () => cores) {
    def realTimeTasks(): Seq[InputPartition] = {
      startRealTime()
      planRealTime(initialOffset())
    }
    def settings: ReaderSettings = readerSettings
    def shardStore = store
  }

  /** Counts the rows handed over and their data bytes; each row goes through an UnsafeProjection as in a scan. */
  final class RowCount {
    val rows = new AtomicLong()
    val bytes = new AtomicLong()

    /** What one task thread hands its rows to: a projection of its own, as each Spark task has. */
    def sink(): InternalRow => Unit = {
      val projection = UnsafeProjection.create(KinesisSchema.schema)
      row => {
        val unsafe = projection(row)
        rows.incrementAndGet()
        bytes.addAndGet(unsafe.getBinary(0).length.toLong)
      }
    }
  }

  def options(fanOut: Boolean, extra: Map[String, String]): KinesisSourceOptions = KinesisSourceOptions.parse(
    Map("kinesis.streamName" -> "s", "kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.region" -> "us-east-1") ++
      (if (fanOut) Map("kinesis.consumerType" -> "SubscribeToShard", "kinesis.consumerName" -> "limits") else Map()) ++
      extra)

  /** A plain reader per shard that waits out each page's bytes at the read rate (and 200 ms): the limits' own pace. */
  def raw(kinesis: LimitedKinesis, count: RowCount): Unit = {
    val threads = kinesis.shards.map { shard =>
      new Thread(() => {
        var iterator = kinesis.shardIterator("s", shard.id, IteratorStart.TrimHorizon)
        var more = true
        while (more) {
          try {
            val page = kinesis.getRecords("s", iterator, 10000)
            page.records.foreach(r => count.bytes.addAndGet(r.data.length.toLong))
            count.rows.addAndGet(page.records.size.toLong)
            iterator = page.nextIterator.get
            more = page.millisBehindLatest > 0
            val bytes = page.records.size.toLong * shard.recordBytes
            if (more) Thread.sleep(math.max(200L, bytes * 1000L / kinesis.limits.readBytesPerSecond))
          } catch { case _: ThrottledException => Thread.sleep(50L) }
        }
      })
    }
    threads.foreach(_.start())
    threads.foreach(_.join())
  }

  /** Micro-batches as Spark runs them until every row is counted: plan, read every task on `cores` slots, commit. */
  def microBatch(
      kinesis: LimitedKinesis,
      options: KinesisSourceOptions,
      cores: Int,
      expected: Long,
      count: RowCount): Int = {
    val stream = new BenchStream(options, kinesis, cores)
    val slots = Executors.newFixedThreadPool(cores)
    var committed: Offset = stream.initialOffset()
    var batches = 0
    try {
      while (count.rows.get() < expected) {
        val start = stream.deserializeOffset(committed.json())
        val end = stream.latestOffset(start, stream.getDefaultReadLimit)
        if (end == null || end == committed) Thread.sleep(10L) // Spark's polling delay when nothing is new
        else {
          val factory = stream.createReaderFactory()
          val tasks = stream.planInputPartitions(start, end).toSeq.map { p =>
            slots.submit(new Callable[Unit] { override def call(): Unit = drain(factory.createReader(p), count) })
          }
          tasks.foreach(_.get())
          stream.commit(end)
          committed = end
          batches += 1
        }
      }
    } finally {
      slots.shutdownNow()
      stream.stop()
    }
    batches
  }

  /** One real-time batch, its tasks on threads of their own, until every row is counted. */
  def realTime(
      kinesis: LimitedKinesis,
      options: KinesisSourceOptions,
      cores: Int,
      expected: Long,
      count: RowCount): Int = {
    val stream = new BenchStream(options, kinesis, cores)
    val partitions = stream.realTimeTasks()
    val tasks = partitions.map(p =>
      new RealTimeRows(p.asInstanceOf[RealTimePartition], stream.settings, stream.shardStore, kinesis))
    val threads = tasks.map { rows =>
      new Thread(() => {
        val add = count.sink()
        while (count.rows.get() < expected) if (rows.next(100L)) add(rows.get())
      })
    }
    try {
      threads.foreach(_.start())
      threads.foreach(_.join())
    } finally {
      tasks.foreach(_.close())
      stream.stop()
    }
    partitions.size
  }

  private def drain(reader: PartitionReader[InternalRow], count: RowCount): Unit = {
    val add = count.sink()
    try while (reader.next()) add(reader.get())
    finally reader.close()
  }
}
