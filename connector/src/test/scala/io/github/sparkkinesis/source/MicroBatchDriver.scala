package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.connector.read.PartitionReaderFactory
import org.apache.spark.sql.connector.read.streaming.ReadLimit

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.reading.TaskReaderFactory

/** One row as tests compare them. */
final case class Out(
    shardId: String,
    partitionKey: String,
    data: String,
    sequenceNumber: String,
    subSequence: Long,
    stream: String = "s")

/**
 * Drives a [[KinesisMicroBatchStream]] over a [[FakeKinesisClient]] the way Spark's micro-batch engine does:
 * latestOffset from the last committed offset, plan, read every partition to its end, commit. A "restart" is a fresh
 * stream object over the same checkpoint directory, resuming from the offset JSON Spark would have logged.
 */
final class MicroBatchDriver(
    val fake: FakeKinesisClient,
    options: Map[String, String],
    val checkpoint: String = Files.createTempDirectory("checkpoint").toString,
    clock: ManualClock = new ManualClock(),
    parallelism: Int = 2,
    metadataOnExecutorDisks: Boolean = false,
    executors: IndexedSeq[String] = IndexedSeq.empty) {

  /** Stream "s" by name, unless `options` name streams by ARN only. */
  private val defaultStream =
    if (options.contains("kinesis.streamARN")) Map.empty[String, String] else Map("kinesis.streamName" -> "s")

  val parsed: KinesisSourceOptions = KinesisSourceOptions.parse(defaultStream ++ Map(
    "kinesis.getRecords.fetchIntervalMs" -> "0",
    "kinesis.describeShardInterval" -> "0",
    "kinesis.idleShardCheckInterval" -> "0",
    "kinesis.clientRetryIntervalsMs" -> "1",
    "kinesis.clientMaxRetryIntervalMs" -> "2") ++ options)

  var stream: KinesisMicroBatchStream = newStream()
  var committed: KinesisSourceOffset = stream.initialOffset().asInstanceOf[KinesisSourceOffset]
  val batches: mutable.Buffer[Seq[Out]] = mutable.Buffer.empty

  private def newStream() = new KinesisMicroBatchStream(
    parsed,
    checkpoint,
    new Configuration(),
    _ => fake,
    () => parallelism,
    clock,
    metadataOnExecutorDisks,
    () => executors) {
    // Readers wait in the driver's simulated time: pacing (fetch intervals, 2 MiB/s per shard) costs no real time.
    override def createReaderFactory(): PartitionReaderFactory =
      new TaskReaderFactory(readerSettings, store, clients, clock, clock.sleep)
  }

  /**
   * The next offset, or None when the source says there is nothing new (no batch would run). Like Spark, it asks with
   * the source's default read limit (Trigger.Once asks with `ReadLimit.allAvailable()`), hands the source the last
   * offset as parsed from its JSON, and runs a batch when the answer is not equal to the last offset as it holds it.
   */
  def plan(limit: ReadLimit = stream.getDefaultReadLimit): Option[KinesisSourceOffset] = {
    val start = stream.deserializeOffset(committed.json())
    val end = stream.latestOffset(start, limit).asInstanceOf[KinesisSourceOffset]
    if (end == null || end == committed) None else Some(end)
  }

  /** Reads every partition of the batch ending at `end`, as one evaluation of the batch. */
  def read(end: KinesisSourceOffset): Seq[Out] = {
    val factory = stream.createReaderFactory()
    stream.planInputPartitions(stream.deserializeOffset(committed.json()), end).toSeq.flatMap { partition =>
      val reader = factory.createReader(partition)
      val rows = mutable.Buffer.empty[Out]
      try {
        while (reader.next()) {
          val r = reader.get()
          rows += Out(
            r.getUTF8String(5).toString,
            r.getUTF8String(2).toString,
            new String(r.getBinary(0), UTF_8),
            r.getUTF8String(3).toString,
            r.getLong(6),
            r.getUTF8String(1).toString)
        }
      } finally reader.close()
      rows
    }
  }

  /** One full micro-batch; None when nothing was new. */
  def runBatch(limit: ReadLimit = stream.getDefaultReadLimit): Option[Seq[Out]] = plan(limit).map { end =>
    val rows = read(end)
    stream.commit(end)
    committed = end
    batches += rows
    rows
  }

  /** Runs batches until the source reports nothing new; every row read, in order. */
  def drain(maxBatches: Int = 50): Seq[Out] = {
    val out = mutable.Buffer.empty[Out]
    var more = true
    var n = 0
    while (more) {
      n += 1
      require(n <= maxBatches, s"the source still had new data after $maxBatches batches")
      runBatch() match {
        case Some(rows) => out ++= rows
        case None => more = false
      }
    }
    out.toVector
  }

  /**
   * A Trigger.AvailableNow run as Spark drives it: prepare, then batches until the source has nothing new; the rows of
   * each batch.
   */
  def availableNow(maxBatches: Int = 50): Seq[Seq[Out]] = {
    restart()
    stream.prepareForTriggerAvailableNow()
    Iterator.continually(runBatch()).takeWhile(_.isDefined).map(_.get).take(maxBatches + 1).toVector
      .ensuring(_.size <= maxBatches, s"the AvailableNow run did not end within $maxBatches batches")
  }

  /** A driver restart: a new stream object resuming from the committed offset as Spark stored it. */
  def restart(): Unit = {
    stream.stop()
    stream = newStream()
    committed = stream.deserializeOffset(committed.json()).asInstanceOf[KinesisSourceOffset]
  }
}
