package io.github.sparkkinesis.bench

import java.nio.charset.StandardCharsets.UTF_8

import com.amazonaws.kinesis.agg.RecordAggregator
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry

import io.github.sparkkinesis.it.{AggregatorCalls, TestStreams}

/** A stream filled with a backlog of KPL aggregates, and what it holds. */
final case class Backlog(
    stream: String,
    shardIds: Seq[String],
    aggregates: Int,
    userRecords: Long,
    bytes: Long,
    fillSeconds: Double)

/**
 * Fills a new stream with KPL aggregates built by the awslabs aggregator, the same number on every shard: each
 * aggregate is put under an explicit hash key inside its shard's range, round-robin over the shards.
 */
object Backlog {

  /** Kinesis takes at most 500 entries and 5 MB per PutRecords call; stay well under the size limit. */
  private val EntriesPerCall = 500
  private val BytesPerCall = 4L * 1024 * 1024
  private val PartitionKeysPerAggregate = 64

  def fill(config: BenchConfig): Backlog = {
    val stream = TestStreams.createStream("bench-drain", config.shards)
    val shards = TestStreams.openShards(stream)
    val hashKeys = shards.map(_.hashKeyRange().startingHashKey()).toIndexedSeq
    val started = System.nanoTime()
    var bytes = 0L
    var pending = Vector.empty[PutRecordsRequestEntry]
    var pendingBytes = 0L
    (0 until config.aggregates).foreach { i =>
      val aggregate = build(i, config)
      bytes += aggregate.length
      if (pending.size == EntriesPerCall || pendingBytes + aggregate.length > BytesPerCall) {
        put(stream, pending)
        pending = Vector.empty
        pendingBytes = 0L
      }
      pending :+= PutRecordsRequestEntry.builder()
        .partitionKey(s"aggregate-$i")
        .explicitHashKey(hashKeys(i % hashKeys.size))
        .data(SdkBytes.fromByteArray(aggregate))
        .build()
      pendingBytes += aggregate.length
    }
    if (pending.nonEmpty) put(stream, pending)
    Backlog(
      stream,
      shards.map(_.shardId()),
      config.aggregates,
      config.userRecords,
      bytes,
      (System.nanoTime() - started) / 1e9)
  }

  /** Aggregate number `i`: `userRecordsPerAggregate` records of `payloadBytes` each, under 64 partition keys. */
  private def build(i: Int, config: BenchConfig): Array[Byte] = {
    val aggregator = new RecordAggregator()
    (0 until config.userRecordsPerAggregate).foreach { j =>
      val full =
        AggregatorCalls.addUserRecord(aggregator, s"key-${j % PartitionKeysPerAggregate}", payload(i, j, config))
      if (full != null) {
        throw new IllegalArgumentException(
          s"${config.userRecordsPerAggregate} user records of ${config.payloadBytes} " +
            "bytes do not fit in one KPL aggregate (1 MB): lower --user-records or --payload-bytes")
      }
    }
    aggregator.clearAndGet().toRecordBytes
  }

  /** `payloadBytes` bytes: the record's coordinates, padded. */
  private def payload(i: Int, j: Int, config: BenchConfig): Array[Byte] = {
    val id = s"$i/$j/".getBytes(UTF_8)
    Array.tabulate(config.payloadBytes)(k => if (k < id.length) id(k) else 'x'.toByte)
  }

  /** One PutRecords call, then again for the entries the emulator refused (bounded), as the raw writer does. */
  private def put(stream: String, entries: Vector[PutRecordsRequestEntry]): Unit =
    RawPut.put(TestStreams.client, stream, entries)
}
