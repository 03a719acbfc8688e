package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.sql.Timestamp
import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue}

import scala.collection.JavaConverters._
import scala.concurrent.duration._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}

/** One row of the `aws-kinesis` source as a sink saw it: which micro-batch, where in the batch, and its columns. */
final case class OutputRecord(
    batchId: Long,
    position: Int,
    data: Array[Byte],
    streamName: String,
    partitionKey: String,
    sequenceNumber: String,
    approximateArrivalTimestamp: Timestamp,
    shardId: String,
    subSequenceNumber: Long) {

  def payload: String = new String(data, UTF_8)

  /** Where the record is in the stream: unique per user record. */
  def position3: (String, String, Long) = (shardId, sequenceNumber, subSequenceNumber)
}

object OutputRecord {

  /** Reads the contract's columns by name from a row of the source (or of a sink that kept them). */
  def fromRow(row: Row, batchId: Long, position: Int): OutputRecord = OutputRecord(
    batchId,
    position,
    row.getAs[Array[Byte]]("data"),
    row.getAs[String]("streamName"),
    row.getAs[String]("partitionKey"),
    row.getAs[String]("sequenceNumber"),
    row.getAs[Timestamp]("approximateArrivalTimestamp"),
    row.getAs[String]("shardId"),
    row.getAs[Long]("subSequenceNumber"))
}

/**
 * A foreachBatch sink that keeps every micro-batch in memory, keyed by batch id as an idempotent sink would: a batch
 * Spark runs again after a restart replaces the earlier run, and a replay whose content differs is recorded as an
 * error, since the source must give a re-run batch exactly the same records.
 */
final class BatchCollector {
  private val batches = new ConcurrentHashMap[Long, Vector[OutputRecord]]()
  private val replayErrors = new ConcurrentLinkedQueue[String]()

  /** Starts `df` into this collector with the given checkpoint; a 200 ms trigger keeps the emulator unhurried. */
  def start(
      df: DataFrame,
      checkpointDir: String,
      trigger: Trigger = Trigger.ProcessingTime(200.millis)): StreamingQuery = {
    // An explicit function value: a lambda is ambiguous between the Scala and Java foreachBatch on Scala 2.12.
    val sink: (DataFrame, Long) => Unit = (batch, batchId) => add(batchId, batch.collect().toSeq)
    df.writeStream.option("checkpointLocation", checkpointDir).trigger(trigger).foreachBatch(sink).start()
  }

  /** Records one batch as evaluated by a sink; public so a custom foreachBatch can collect into it too. */
  def add(batchId: Long, rows: Seq[Row]): Unit = {
    val records = rows.zipWithIndex.map { case (row, i) => OutputRecord.fromRow(row, batchId, i) }.toVector
    val previous = batches.put(batchId, records)
    if (previous != null && previous.map(identity3) != records.map(identity3)) {
      replayErrors.add(s"batch $batchId was run again with different records: ${previous.size} records first, " +
        s"${records.size} the second time")
    }
  }

  /** Every record collected so far in delivery order: by batch id, then by position in the batch. */
  def records: Seq[OutputRecord] = batches.asScala.toSeq.sortBy(_._1).flatMap(_._2)

  def size: Int = batches.values().asScala.map(_.size).sum

  def batchCount: Int = batches.size()

  def errors: Seq[String] = replayErrors.asScala.toVector

  /**
   * Waits until at least `n` records have arrived, giving up at once if the query has died: its error is then the
   * failure's cause.
   */
  def awaitRecords(query: StreamingQuery, n: Int, timeout: FiniteDuration = 60.seconds): Unit =
    Eventually.await(
      s"$n records in the sink of query ${query.id}",
      timeout,
      s"$size records after $batchCount batches") {
      QueryChecks.failIfStopped(query)
      size >= n
    }

  private def identity3(r: OutputRecord): ((String, String, Long), String, String) =
    (r.position3, r.partitionKey, r.payload)
}

/** Checks on a running query that turn a dead query into an immediate, explained failure. */
object QueryChecks {
  def failIfStopped(query: StreamingQuery): Unit = {
    query.exception.foreach(e => Eventually.giveUp(s"query ${query.id} failed: ${e.getMessage}", e))
    if (!query.isActive) Eventually.giveUp(s"query ${query.id} stopped without an error")
  }
}
