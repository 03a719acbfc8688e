package io.github.sparkkinesis.bench

import java.security.MessageDigest
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.collection.JavaConverters._
import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.CodedInputStream
import software.amazon.awssdk.services.kinesis.model.{GetRecordsRequest, GetShardIteratorRequest, ShardIteratorType}

import io.github.sparkkinesis.it.{KplAggregates, TestStreams}

/**
 * What a reader took to drain the backlog: user and Kinesis records read, the wall-clock time, and (for the raw client)
 * the mean time spent on one shard, to set beside the connector's mean task time.
 */
final case class DrainResult(userRecords: Long, kinesisRecords: Long, seconds: Double, meanShardMs: Long = 0L) {
  def userRecordsPerSecond: Double = userRecords / seconds
  def kinesisRecordsPerSecond: Double = kinesisRecords / seconds
}

/**
 * The baseline: a plain AWS SDK v2 client (unshaded, Apache HTTP client) reading every shard from TRIM_HORIZON until it
 * is caught up (MillisBehindLatest 0, the connector's stop rule) with GetRecords limit 10000, a pool of `threads`
 * threads taking one shard each. It de-aggregates as the connector does: checks the KPL magic and MD5, reads the
 * protobuf `AggregatedRecord` with protobuf-java's `CodedInputStream` (KCL 1's generated parser does not run on every
 * Spark line's protobuf runtime), and copies out each user record's partition key and data.
 */
object RawDrain {

  private val Limit = 10000
  private val Magic = KplAggregates.MagicBytes
  private val DigestLength = 16

  def run(backlog: Backlog, threads: Int): DrainResult = {
    val pool = Executors.newFixedThreadPool(threads)
    val started = System.nanoTime()
    try {
      val perShard = backlog.shardIds.map { shardId =>
        pool.submit(new Callable[DrainResult] { override def call(): DrainResult = readShard(backlog.stream, shardId) })
      }.map(_.get())
      DrainResult(
        perShard.map(_.userRecords).sum,
        perShard.map(_.kinesisRecords).sum,
        (System.nanoTime() - started) / 1e9,
        (perShard.map(_.seconds).sum * 1000 / perShard.size).toLong)
    } finally {
      pool.shutdownNow()
      pool.awaitTermination(10, TimeUnit.SECONDS)
    }
  }

  private def readShard(stream: String, shardId: String): DrainResult = {
    val client = TestStreams.client
    val md5 = MessageDigest.getInstance("MD5")
    val started = System.nanoTime()
    var iterator = client.getShardIterator(GetShardIteratorRequest.builder()
      .streamName(stream).shardId(shardId).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
    val counts = new Counts
    var records = 0L
    var caughtUp = false
    while (!caughtUp) {
      val response = client.getRecords(GetRecordsRequest.builder().shardIterator(iterator).limit(Limit).build())
      response.records().asScala.foreach { record =>
        records += 1
        deaggregate(record.data().asByteArray(), record.partitionKey(), md5, counts)
      }
      iterator = response.nextShardIterator()
      caughtUp = iterator == null || response.millisBehindLatest() == 0L
    }
    require(counts.payloadBytes > 0 || counts.userRecords == 0, s"no payload bytes read from $shardId")
    DrainResult(counts.userRecords, records, (System.nanoTime() - started) / 1e9)
  }

  /** User records and their bytes; the bytes are summed so that the JIT cannot drop the copies. */
  private[bench] final class Counts {
    var userRecords = 0L
    var payloadBytes = 0L

    def add(partitionKey: String, data: Array[Byte]): Unit = {
      userRecords += 1
      payloadBytes += data.length + partitionKey.length
    }
  }

  /** Counts the user records in one Kinesis record, copying out each one's partition key and data. */
  private[bench] def deaggregate(data: Array[Byte], partitionKey: String, md5: MessageDigest, counts: Counts): Unit = {
    val messageLength = data.length - Magic.length - DigestLength
    val isAggregate = messageLength > 0 &&
      java.util.Arrays.equals(java.util.Arrays.copyOfRange(data, 0, Magic.length), Magic) && {
        md5.reset()
        md5.update(data, Magic.length, messageLength)
        java.util.Arrays.equals(
          md5.digest(),
          java.util.Arrays.copyOfRange(data, data.length - DigestLength, data.length))
      }
    if (!isAggregate) counts.add(partitionKey, data)
    else {
      // AggregatedRecord: field 1 is the partition key table, field 3 a record (1: key index, 3: data).
      val in = CodedInputStream.newInstance(data, Magic.length, messageLength)
      val keys = ArrayBuffer.empty[String]
      val records = ArrayBuffer.empty[(Long, Array[Byte])]
      forEachField(in) {
        case (1, _) => keys += in.readString()
        case (3, _) =>
          val limit = in.pushLimit(in.readRawVarint32())
          var key = 0L
          var payload = Array.emptyByteArray
          forEachField(in) {
            case (1, _) => key = in.readUInt64()
            case (3, _) => payload = in.readByteArray()
            case (_, tag) => in.skipField(tag)
          }
          in.popLimit(limit)
          records += ((key, payload))
        case (_, tag) => in.skipField(tag)
      }
      records.foreach { case (key, payload) => counts.add(keys(key.toInt), payload) }
    }
  }

  /** Calls `f(fieldNumber, tag)` for each field until the end of the message (or of the current limit). */
  private def forEachField(in: CodedInputStream)(f: (Int, Int) => Any): Unit = {
    var tag = in.readTag()
    while (tag != 0) {
      f(tag >>> 3, tag)
      tag = in.readTag()
    }
  }
}
