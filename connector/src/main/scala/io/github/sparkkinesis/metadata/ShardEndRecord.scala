package io.github.sparkkinesis.metadata

import com.fasterxml.jackson.databind.JsonNode

import io.github.sparkkinesis.offsets.{Json, ShardPosition}

/**
 * What the first attempt that read a shard in a micro-batch saw, for the driver's planning and the query's metrics.
 *
 * @param millisBehindLatest
 *   how far behind the shard's tip the attempt was when it stopped
 * @param moreAvailable
 *   whether it stopped with records known to lie ahead (a limit, not the tip), so the driver plans the shard again
 *   without first checking it
 * @param boundReached
 *   whether it stopped at the first record past its AvailableNow bound: the shard has reached the run's target
 * @param lastArrivalMs
 *   when the last record read arrived in Kinesis, by the service's clock (None: none read)
 * @param bytes
 *   bytes of the Kinesis records read (KPL aggregates as stored)
 * @param getRecordsCalls
 *   GetRecords calls made, throttled ones included
 * @param throttledCalls
 *   GetRecords calls that Kinesis throttled
 * @param pacedMs
 *   how long after the attempt stopped the read-rate cap (`kinesis.getRecords.maxBytesPerSecondPerShard`) held the
 *   shard's next call back: the driver looks at the shard again no sooner (a duration, never compared with a clock of
 *   another machine)
 */
final case class ReadStats(
    millisBehindLatest: Long,
    moreAvailable: Boolean,
    boundReached: Boolean,
    lastArrivalMs: Option[Long],
    bytes: Long,
    getRecordsCalls: Long,
    throttledCalls: Long,
    pacedMs: Long = 0L) {

  def toJson: JsonNode = Json.obj(Seq(
    "millisBehindLatest" -> Json.number(millisBehindLatest),
    "moreAvailable" -> Json.bool(moreAvailable),
    "boundReached" -> Json.bool(boundReached),
    "bytes" -> Json.number(bytes),
    "getRecordsCalls" -> Json.number(getRecordsCalls),
    "throttledCalls" -> Json.number(throttledCalls)) ++
    lastArrivalMs.map(ms => "lastArrivalMs" -> Json.number(ms)) ++
    Some(pacedMs).filter(_ > 0).map(ms => "pacedMs" -> Json.number(ms)): _*)
}

object ReadStats {
  def fromJson(node: JsonNode, what: String): ReadStats = ReadStats(
    millisBehindLatest = Json.field(node, "millisBehindLatest", what).asLong(),
    moreAvailable = Json.field(node, "moreAvailable", what).asBoolean(),
    boundReached = Json.field(node, "boundReached", what).asBoolean(),
    lastArrivalMs = Json.optionalLong(node, "lastArrivalMs"),
    bytes = Json.field(node, "bytes", what).asLong(),
    getRecordsCalls = Json.field(node, "getRecordsCalls", what).asLong(),
    throttledCalls = Json.field(node, "throttledCalls", what).asLong(),
    pacedMs = Json.optionalLong(node, "pacedMs").getOrElse(0L))
}

/**
 * Where micro-batch `batch` ended in one shard, as recorded by the first task attempt that read it to its stopping
 * point. `start` is kept so that a record left by another query (a reused metadata path) is caught. `stats` is what
 * that attempt saw (None in records written by 0.1.0).
 */
final case class ShardEndRecord(
    stream: String,
    shardId: String,
    batch: Long,
    start: ShardPosition,
    end: ShardPosition,
    recordCount: Long,
    stats: Option[ReadStats] = None) {

  def toJson: String = Json.write(toNode(withVersion = true))

  /** The record as JSON; inside a [[TaskEndRecord]] it goes without a version field of its own. */
  def toNode(withVersion: Boolean): JsonNode = Json.obj((
    (if (withVersion) Seq("version" -> Json.number(if (stats.isEmpty) 1 else ShardEndRecord.Version)) else Nil) ++ Seq(
      "stream" -> Json.text(stream),
      "shardId" -> Json.text(shardId),
      "batch" -> Json.number(batch),
      "start" -> ShardPosition.toJson(start),
      "end" -> ShardPosition.toJson(end),
      "recordCount" -> Json.number(recordCount)) ++ stats.map(s => "stats" -> s.toJson)): _*)

  /** Whether two attempts read the same records: same range, whatever they counted. */
  def sameRange(other: ShardEndRecord): Boolean =
    stream == other.stream && shardId == other.shardId && batch == other.batch && start == other.start &&
      end == other.end
}

object ShardEndRecord {

  /** Version 2 adds `stats`; a record without them is written as version 1, which 0.1.0 reads. */
  val Version = 2

  def fromJson(raw: String, where: String): ShardEndRecord = {
    val what = s"the shard end record $where"
    val node = Json.read(raw, what)
    Json.checkVersion(node, Version, what)
    fromNode(node, what)
  }

  def fromNode(node: JsonNode, what: String): ShardEndRecord =
    ShardEndRecord(
      stream = Json.field(node, "stream", what).asText(),
      shardId = Json.field(node, "shardId", what).asText(),
      batch = Json.field(node, "batch", what).asLong(),
      start = ShardPosition.fromJson(Json.field(node, "start", what), what),
      end = ShardPosition.fromJson(Json.field(node, "end", what), what),
      recordCount = Json.field(node, "recordCount", what).asLong(),
      stats = Option(node.get("stats")).filterNot(_.isNull).map(ReadStats.fromJson(_, what)))
}
