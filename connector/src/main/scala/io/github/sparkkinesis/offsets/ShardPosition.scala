package io.github.sparkkinesis.offsets

import java.math.BigInteger

import com.fasterxml.jackson.databind.JsonNode

import io.github.sparkkinesis.client.IteratorStart

/**
 * A deterministic place in one shard: reading from the same position always yields the same records (while they are
 * retained). LATEST is not a position; it is resolved to [[ShardPosition.AtTimestamp]] once, when a query starts.
 */
sealed trait ShardPosition {

  /** How to get an iterator for this position; None for [[ShardPosition.ShardEnd]]. */
  def iteratorStart: Option[IteratorStart]
}

object ShardPosition {

  case object TrimHorizon extends ShardPosition {
    def iteratorStart: Option[IteratorStart] = Some(IteratorStart.TrimHorizon)
  }

  /** The first record that arrived at or after `epochMillis`. */
  final case class AtTimestamp(epochMillis: Long) extends ShardPosition {
    def iteratorStart: Option[IteratorStart] = Some(IteratorStart.AtTimestamp(epochMillis))
  }

  final case class AtSequenceNumber(sequenceNumber: String) extends ShardPosition {
    def iteratorStart: Option[IteratorStart] = Some(IteratorStart.AtSequenceNumber(sequenceNumber))
  }

  /** Just after the record with this sequence number (and all of its KPL sub-records). */
  final case class AfterSequenceNumber(sequenceNumber: String) extends ShardPosition {
    def iteratorStart: Option[IteratorStart] = Some(IteratorStart.AfterSequenceNumber(sequenceNumber))
  }

  /**
   * Just after sub-record `subSequenceNumber` of the KPL aggregate stored as the record with `sequenceNumber`, as the
   * KCL checkpoints an aggregate handed over in part: reading goes on from that record (an iterator AT_SEQUENCE_NUMBER)
   * without its sub-records up to this one.
   */
  final case class AfterSubSequenceNumber(sequenceNumber: String, subSequenceNumber: Long) extends ShardPosition {
    def iteratorStart: Option[IteratorStart] = Some(IteratorStart.AtSequenceNumber(sequenceNumber))
  }

  /** The shard is closed and every record of it has been read. */
  case object ShardEnd extends ShardPosition {
    def iteratorStart: Option[IteratorStart] = None
  }

  /**
   * Orders Kinesis sequence numbers, which are decimal strings of up to 128 bits, as numbers. Readers compare every
   * record's, so strings of digits are compared without parsing (fewer significant digits is smaller, else the first
   * differing digit decides); anything else is parsed, and fails, as BigInteger parses it.
   */
  def compareSequenceNumbers(a: String, b: String): Int =
    if (isDigits(a) && isDigits(b)) {
      val (fromA, fromB) = (firstSignificant(a), firstSignificant(b))
      val byLength = Integer.compare(a.length - fromA, b.length - fromB)
      if (byLength != 0) byLength
      else {
        var i = 0
        while (fromA + i < a.length && a.charAt(fromA + i) == b.charAt(fromB + i)) i += 1
        if (fromA + i == a.length) 0 else Integer.compare(a.charAt(fromA + i), b.charAt(fromB + i))
      }
    } else new BigInteger(a).compareTo(new BigInteger(b))

  private def isDigits(s: String): Boolean = {
    var i = 0
    while (i < s.length && s.charAt(i) >= '0' && s.charAt(i) <= '9') i += 1
    s.nonEmpty && i == s.length
  }

  /** Where the significant digits start: past leading zeros, but "0" keeps its one digit. */
  private def firstSignificant(digits: String): Int = {
    var i = 0
    while (i < digits.length - 1 && digits.charAt(i) == '0') i += 1
    i
  }

  /** The record a position reads first, whole or in part, by its sequence number; None where it names no record. */
  def firstRecordOf(position: ShardPosition): Option[String] = position match {
    case AtSequenceNumber(seq) => Some(seq)
    case AfterSubSequenceNumber(seq, _) => Some(seq)
    case _ => None
  }

  def isSequenceNumber(s: String): Boolean = s.nonEmpty && s.length <= 128 && s.forall(c => c >= '0' && c <= '9')

  /** The JSON type of [[AfterSubSequenceNumber]], which offsets of version 4 introduced. */
  val AfterSubSequenceNumberType = "AFTER_SUB_SEQUENCE_NUMBER"

  def toJson(position: ShardPosition): JsonNode = position match {
    case TrimHorizon => Json.obj("type" -> Json.text("TRIM_HORIZON"))
    case ShardEnd => Json.obj("type" -> Json.text("SHARD_END"))
    case AtTimestamp(ms) => Json.obj("type" -> Json.text("AT_TIMESTAMP"), "timestampMs" -> Json.number(ms))
    case AtSequenceNumber(seq) =>
      Json.obj("type" -> Json.text("AT_SEQUENCE_NUMBER"), "sequenceNumber" -> Json.text(seq))
    case AfterSequenceNumber(seq) =>
      Json.obj("type" -> Json.text("AFTER_SEQUENCE_NUMBER"), "sequenceNumber" -> Json.text(seq))
    case AfterSubSequenceNumber(seq, sub) => Json.obj(
        "type" -> Json.text(AfterSubSequenceNumberType),
        "sequenceNumber" -> Json.text(seq),
        "subSequenceNumber" -> Json.number(sub))
  }

  def fromJson(node: JsonNode, what: String): ShardPosition = Json.field(node, "type", what).asText() match {
    case "TRIM_HORIZON" => TrimHorizon
    case "SHARD_END" => ShardEnd
    case "AT_TIMESTAMP" => AtTimestamp(Json.field(node, "timestampMs", what).asLong())
    case "AT_SEQUENCE_NUMBER" => AtSequenceNumber(Json.field(node, "sequenceNumber", what).asText())
    case "AFTER_SEQUENCE_NUMBER" => AfterSequenceNumber(Json.field(node, "sequenceNumber", what).asText())
    case AfterSubSequenceNumberType => AfterSubSequenceNumber(
        Json.field(node, "sequenceNumber", what).asText(),
        Json.field(node, "subSequenceNumber", what).asLong())
    case other => throw new IllegalArgumentException(s"Cannot read $what: unknown position type '$other'")
  }
}
