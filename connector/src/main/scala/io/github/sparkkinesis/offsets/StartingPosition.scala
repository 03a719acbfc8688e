package io.github.sparkkinesis.offsets

import java.time.{Instant, OffsetDateTime}
import java.time.format.DateTimeParseException
import java.util.Locale

import scala.util.control.NonFatal

/** Where a query without a checkpoint starts: the parsed `kinesis.startingPosition` option. */
sealed trait StartingPosition

object StartingPosition {

  /** Records that arrive after the query starts, in the shards open at that moment. */
  case object Latest extends StartingPosition

  /** The oldest retained record of every shard (TRIM_HORIZON and EARLIEST alike), parents before children. */
  case object TrimHorizon extends StartingPosition

  /** Records that arrived at or after `epochMillis`, in every retained shard. */
  final case class AtTimestamp(epochMillis: Long) extends StartingPosition

  /** A position per shard id; None stands for LATEST. Shards not named start at TRIM_HORIZON. */
  final case class PerShard(positions: Map[String, Option[ShardPosition]]) extends StartingPosition

  private val AtTimestampPrefix = "AT_TIMESTAMP"

  def parse(raw: String): Either[String, StartingPosition] = {
    val value = raw.trim
    value.toUpperCase(Locale.ROOT) match {
      case "LATEST" => Right(Latest)
      case "TRIM_HORIZON" | "EARLIEST" => Right(TrimHorizon)
      case upper if upper.startsWith(AtTimestampPrefix) =>
        parseInstant(value.substring(AtTimestampPrefix.length).trim).map(AtTimestamp)
      case _ if value.startsWith("{") => parsePerShard(value)
      case _ => Left("it is not a known starting position")
    }
  }

  private def parseInstant(text: String): Either[String, Long] =
    try Right(Instant.parse(text).toEpochMilli)
    catch {
      case _: DateTimeParseException =>
        try Right(OffsetDateTime.parse(text).toInstant.toEpochMilli)
        catch {
          case _: DateTimeParseException =>
            Left(s"'$text' is not an ISO-8601 instant such as 2024-05-01T12:00:00Z")
        }
    }

  private def parsePerShard(raw: String): Either[String, StartingPosition] =
    try {
      val what = "kinesis.startingPosition"
      val node = Json.read(raw, what)
      if (!node.isObject) return Left("the JSON is not an object of shard id to position")
      val positions = Json.fields(node).filterNot(_._1 == "metadata").map { case (shardId, spec) =>
        val kind = Json.field(spec, "iteratorType", s"$what for $shardId").asText().toUpperCase(Locale.ROOT)
        def arg = Option(spec.get("iteratorPosition")).map(_.asText()).getOrElse(
          throw new IllegalArgumentException(s"shard $shardId: $kind needs an iteratorPosition"))
        def sequenceNumber = {
          val seq = arg
          if (!ShardPosition.isSequenceNumber(seq))
            throw new IllegalArgumentException(s"shard $shardId: '$seq' is not a sequence number")
          seq
        }
        val position: Option[ShardPosition] = kind match {
          case "LATEST" => None
          case "TRIM_HORIZON" | "EARLIEST" => Some(ShardPosition.TrimHorizon)
          case "AT_SEQUENCE_NUMBER" => Some(ShardPosition.AtSequenceNumber(sequenceNumber))
          case "AFTER_SEQUENCE_NUMBER" => Some(ShardPosition.AfterSequenceNumber(sequenceNumber))
          case "AT_TIMESTAMP" =>
            val ms = arg
            Some(ShardPosition.AtTimestamp(
              if (ms.forall(_.isDigit)) ms.toLong
              else parseInstant(ms).fold(e => throw new IllegalArgumentException(s"shard $shardId: $e"), identity)))
          case other => throw new IllegalArgumentException(
              s"shard $shardId: iteratorType '$other' is not one of AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, " +
                "AT_TIMESTAMP, TRIM_HORIZON, LATEST")
        }
        shardId -> position
      }
      if (positions.isEmpty) Left("the JSON names no shard") else Right(PerShard(positions.toMap))
    } catch {
      case NonFatal(e) => Left(e.getMessage)
    }
}
