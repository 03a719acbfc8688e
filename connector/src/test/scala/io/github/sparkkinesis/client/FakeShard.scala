package io.github.sparkkinesis.client

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

import scala.collection.mutable.ArrayBuffer

/**
 * One shard of a [[FakeKinesisClient]] stream. Positions are absolute: record `p` stays at `p` when older records are
 * trimmed, so iterators issued before a trim stay meaningful.
 */
private[client] final class FakeShard(
    val id: String,
    val parent: Option[String],
    val adjacentParent: Option[String],
    val range: HashKeyRange,
    val startingSequenceNumber: BigInt) {

  private val kept = ArrayBuffer.empty[KinesisRecord]

  /** How many of the oldest records retention has removed; the first readable position. */
  var trimmed: Int = 0
  var endingSequenceNumber: Option[BigInt] = None

  /** Empty pages every fresh iterator meets before records, as AWS serves them over sparse or old stretches. */
  var emptyPagesPerIterator: Int = 0

  /** The MillisBehindLatest of those empty pages; None: the next record's age. */
  var emptyPageLag: Option[Long] = None

  /**
   * A stretch of empty subscription events at position `emptyEventsAt`, one per continuation sequence number, with
   * MillisBehindLatest `emptyEventLag` (see [[FakeFanOut.emptyEventsAhead]]).
   */
  var emptyEvents: Vector[BigInt] = Vector.empty
  var emptyEventsAt: Int = 0
  var emptyEventLag: Long = 0L

  def isClosed: Boolean = endingSequenceNumber.isDefined

  /** The position after the newest record: where LATEST starts. */
  def end: Int = trimmed + kept.size

  def append(record: KinesisRecord): Unit = kept += record

  def trim(count: Int): Unit = {
    val n = math.min(count, kept.size)
    kept.remove(0, n)
    trimmed += n
  }

  /** The readable records in positions [from, until). */
  def slice(from: Int, until: Int): Vector[KinesisRecord] = kept.slice(from - trimmed, until - trimmed).toVector

  /** The first readable position whose record satisfies `p`, else [[end]]. */
  def firstPosition(p: KinesisRecord => Boolean): Int = {
    val i = kept.indexWhere(p)
    if (i < 0) end else trimmed + i
  }

  def describe: ShardDescription =
    ShardDescription(
      id,
      parent,
      adjacentParent,
      range,
      startingSequenceNumber.toString,
      endingSequenceNumber.map(_.toString))
}

/**
 * Where an iterator of the fake points, and when it was issued; it travels as an opaque string. The fields are joined
 * with '/', which stream names and shard ids cannot contain.
 */
private[client] final case class FakeIterator(
    stream: String,
    shardId: String,
    position: Int,
    issuedAtMillis: Long,
    emptyPagesLeft: Int = 0) {
  def encode: String = "fake-iterator-" + Base64.getUrlEncoder.encodeToString(
    s"$stream/$shardId/$position/$issuedAtMillis/$emptyPagesLeft".getBytes(UTF_8))
}

private[client] object FakeIterator {

  /** The iterator `text` encodes, or None when the text did not come from [[FakeIterator.encode]]. */
  def decode(text: String): Option[FakeIterator] =
    try {
      Some(text).filter(_.startsWith("fake-iterator-")).flatMap { t =>
        // the stream may be an ARN, which has a '/' of its own
        new String(Base64.getUrlDecoder.decode(t.stripPrefix("fake-iterator-")), UTF_8).split('/').reverse match {
          case Array(empty, issued, position, shard, stream @ _*) if stream.nonEmpty =>
            Some(FakeIterator(stream.reverse.mkString("/"), shard, position.toInt, issued.toLong, empty.toInt))
          case _ => None
        }
      }
    } catch {
      case _: IllegalArgumentException => None // bad Base64 or numbers (NumberFormatException is one)
    }
}
