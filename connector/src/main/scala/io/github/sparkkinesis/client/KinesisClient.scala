package io.github.sparkkinesis.client

/**
 * The connector's view of Kinesis Data Streams: the few calls a polling reader needs, stated in connector terms.
 * Implementations hide paging, request building and the SDK's exception zoo; every failure surfaces as a
 * [[KinesisClientException]] subclass so callers can tell throttling and iterator expiry from real errors.
 */
trait KinesisClient extends AutoCloseable {

  /** Every shard of the stream that is still within its retention period, open and closed, paging hidden. */
  def listShards(streamName: String): Seq[ShardDescription]

  /** A fresh shard iterator that starts reading `shardId` at `start`. */
  def shardIterator(streamName: String, shardId: String, start: IteratorStart): String

  /** One GetRecords call: at most `limit` records from `iterator`, plus where to continue. */
  def getRecords(streamName: String, iterator: String, limit: Int): RecordBatch

  override def close(): Unit = ()
}

/** The inclusive range of 128-bit hash keys a shard owns. */
final case class HashKeyRange(startingHashKey: BigInt, endingHashKey: BigInt) {
  def contains(hashKey: BigInt): Boolean = hashKey >= startingHashKey && hashKey <= endingHashKey
}

/**
 * One shard as ListShards describes it. A shard is closed once `endingSequenceNumber` is set: it takes no new records,
 * and reading it to its end yields no next iterator.
 */
final case class ShardDescription(
    shardId: String,
    parentShardId: Option[String],
    adjacentParentShardId: Option[String],
    hashKeyRange: HashKeyRange,
    startingSequenceNumber: String,
    endingSequenceNumber: Option[String]) {

  def parents: Seq[String] = parentShardId.toSeq ++ adjacentParentShardId.toSeq

  def isClosed: Boolean = endingSequenceNumber.isDefined
}

/** Where a new shard iterator starts, in the five ways Kinesis offers. */
sealed trait IteratorStart

object IteratorStart {
  case object TrimHorizon extends IteratorStart
  case object Latest extends IteratorStart
  final case class AtTimestamp(epochMillis: Long) extends IteratorStart
  final case class AtSequenceNumber(sequenceNumber: String) extends IteratorStart
  final case class AfterSequenceNumber(sequenceNumber: String) extends IteratorStart
}

/** A record exactly as Kinesis stores it (possibly a KPL aggregate of several user records). */
final case class KinesisRecord(
    data: Array[Byte],
    partitionKey: String,
    sequenceNumber: String,
    approximateArrivalTimestampMillis: Long)

/**
 * The answer to one GetRecords call. `nextIterator` is empty once a closed shard has been read to its end;
 * `millisBehindLatest` is 0 when the reader is at the tip of the shard; `msAfterAnswer`, how long the call went on
 * after Kinesis answered (its headers came: the page's transfer and parsing), where the client measures it.
 */
final case class RecordBatch(
    records: Seq[KinesisRecord],
    nextIterator: Option[String],
    millisBehindLatest: Long,
    childShardIds: Seq[String] = Nil,
    msAfterAnswer: Long = 0L)
