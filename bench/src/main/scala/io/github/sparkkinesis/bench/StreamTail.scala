package io.github.sparkkinesis.bench

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.atomic.AtomicBoolean

import scala.collection.JavaConverters._
import scala.collection.mutable.ArrayBuffer

import software.amazon.awssdk.services.kinesis.model.{GetRecordsRequest, GetShardIteratorRequest, ShardIteratorType}

import io.github.sparkkinesis.aggregation.KplDeaggregator
import io.github.sparkkinesis.it.TestStreams

/**
 * One row as a [[StreamTail]] saw it: when it was stamped, when Kinesis took its record (ApproximateArrivalTimestamp)
 * and when the tail read it (epoch ms), which Kinesis record it came in, and what its data holds after the stamp.
 */
final case class TailedRow(stampedMs: Long, arrivedMs: Long, readMs: Long, kinesisRecord: Long, rest: String = "")

/**
 * Reads a new stream's shards from TRIM_HORIZON on a thread of its own with the raw SDK client, a GetRecords round over
 * all shards every `pollMs` (the emulator has no per-shard call limit), de-aggregating each record. Each row's data is
 * the epoch milliseconds at which its writer stamped it, alone or followed by a `:`; the tail keeps the stamp and the
 * times Kinesis took and the tail read the row. The poll interval adds to the read time; the same tail reads every
 * writer.
 */
final class StreamTail(stream: String, pollMs: Long) {
  private val rows = ArrayBuffer.empty[TailedRow] // guarded by this
  private var kinesisRecords = 0L // guarded by this
  private val stopping = new AtomicBoolean(false)
  @volatile private var failure: Option[Throwable] = None
  @volatile private var caughtUpAt = 0L // when the last round that found every shard at its tip started

  private val iterators = scala.collection.mutable.Map(TestStreams.listShards(stream).map { shard =>
    shard.shardId() -> TestStreams.client.getShardIterator(GetShardIteratorRequest.builder().streamName(stream)
      .shardId(shard.shardId()).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
  }: _*)

  private val thread = new Thread(
    new Runnable {
      override def run(): Unit =
        try while (!stopping.get()) {
            val round = System.currentTimeMillis()
            if (iterators.keys.toVector.map(poll).forall(identity)) caughtUpAt = round
            Thread.sleep(pollMs) // the reader's pace, as a consumer's fetch interval
          }
        catch {
          case e: Throwable => failure = Some(e)
        }
    },
    s"stream-tail-$stream")
  thread.setDaemon(true)
  thread.start()

  /** One GetRecords call on `shardId`; true if the shard is caught up with its tip. */
  private def poll(shardId: String): Boolean = {
    val response = TestStreams.client.getRecords(GetRecordsRequest.builder().shardIterator(iterators(shardId))
      .limit(10000).build())
    val now = System.currentTimeMillis()
    iterators(shardId) = response.nextShardIterator()
    synchronized {
      response.records().asScala.foreach { record =>
        kinesisRecords += 1
        val arrived = record.approximateArrivalTimestamp().toEpochMilli
        KplDeaggregator.deaggregate(record.data().asByteArray(), record.partitionKey()).foreach { row =>
          val text = new String(row.data, UTF_8)
          val (stamp, rest) = text.span(_ != ':')
          rows += TailedRow(stamp.toLong, arrived, now, kinesisRecords, rest.drop(1))
        }
      }
    }
    response.records().isEmpty && response.millisBehindLatest() == 0L
  }

  /** Rows read so far. */
  def count: Int = synchronized(rows.size)

  /** Fails if the reader's thread failed. */
  def check(): Unit = failure.foreach(e => throw new IllegalStateException(s"reading $stream failed: $e", e))

  /** Whether a round started at `time` or later found every shard at its tip. */
  def caughtUpSince(time: Long): Boolean = caughtUpAt >= time

  /** Stops reading; returns every row read and the number of Kinesis records they came in. */
  def stop(): (Seq[TailedRow], Long) = {
    stopping.set(true)
    thread.join(30000L)
    check()
    synchronized((rows.toVector, kinesisRecords))
  }
}
