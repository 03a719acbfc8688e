package io.github.sparkkinesis.bench

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.collection.mutable.ArrayBuffer

import io.github.sparkkinesis.aggregation.KplDeaggregator
import io.github.sparkkinesis.it.TestStreams

/**
 * What a writer left in its stream, read back from every shard and de-aggregated: the Kinesis records of its timed
 * write (those whose first row comes after the priming rows) and how many of them are KPL aggregates, rows (user
 * records), distinct rows written, extra copies of rows seen more than once (the sink delivers at least once) and
 * records that are no row of the writer at all (wrong number, partition key or bytes).
 */
final case class Landed(
    kinesisRecords: Long,
    aggregates: Long,
    rows: Long,
    distinct: Long,
    duplicates: Long,
    strangers: Long) {

  /** Every row of a write of `expected` rows arrived, whole, and nothing else did (duplicates aside). */
  def isComplete(expected: Long): Boolean = distinct == expected && strangers == 0
}

object Landed {

  /**
   * Reads every shard of `stream` from TRIM_HORIZON with the raw SDK client (2 threads) and de-aggregates each record
   * with the connector's own `KplDeaggregator`, checking each row against [[SinkRows]].
   */
  def count(stream: String, expectedRows: Int, config: SinkConfig): Landed = {
    val pool = Executors.newFixedThreadPool(2)
    try {
      val perShard = TestStreams.listShards(stream).map { shard =>
        pool.submit(new Callable[ShardRows] {
          override def call(): ShardRows = readShard(stream, shard.shardId(), expectedRows, config)
        })
      }.map(_.get())
      val seen = new java.util.BitSet(expectedRows)
      var duplicates = 0L
      perShard.foreach(_.ids.foreach { id =>
        if (seen.get(id)) duplicates += 1 else seen.set(id)
      })
      Landed(
        perShard.map(_.kinesisRecords).sum,
        perShard.map(_.aggregates).sum,
        perShard.map(s => s.ids.size.toLong + s.strangers).sum,
        seen.cardinality().toLong,
        duplicates,
        perShard.map(_.strangers).sum)
    } finally {
      pool.shutdownNow()
      pool.awaitTermination(10, TimeUnit.SECONDS)
    }
  }

  private final case class ShardRows(kinesisRecords: Long, aggregates: Long, ids: ArrayBuffer[Int], strangers: Long)

  private def readShard(stream: String, shardId: String, expectedRows: Int, config: SinkConfig): ShardRows = {
    val ids = ArrayBuffer.empty[Int]
    var strangers = 0L
    var aggregates = 0L
    var timedRecords = 0L
    TestStreams.readShard(stream, shardId).foreach { record =>
      val data = record.data().asByteArray()
      val rows = KplDeaggregator.deaggregate(data, record.partitionKey())
      // A write commits only once Kinesis has confirmed all its rows, so no record mixes priming and timed rows.
      if (rows.headOption.flatMap(r => SinkRows.id(r.data)).exists(_ >= config.primeRows)) {
        timedRecords += 1
        if (KplDeaggregator.subRecords(data).isDefined) aggregates += 1
      }
      rows.foreach { row =>
        SinkRows.id(row.data).filter(id => id < expectedRows && isRow(id, row.partitionKey, row.data, config)) match {
          case Some(id) => ids += id.toInt
          case None => strangers += 1
        }
      }
    }
    ShardRows(timedRecords, aggregates, ids, strangers)
  }

  private def isRow(id: Long, partitionKey: String, data: Array[Byte], config: SinkConfig): Boolean =
    partitionKey == SinkRows.partitionKey(id, config) && java.util.Arrays.equals(data, SinkRows.payload(id, config))
}
