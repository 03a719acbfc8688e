package io.github.sparkkinesis.metadata

import io.github.sparkkinesis.offsets.{Json, ShardPosition}

/**
 * Where micro-batch `batch` ended in one shard, as recorded by the first task attempt that read it to its
 * stopping point. `start` is kept so that a record left by another query (a reused metadata path) is caught.
 *
 * @param millisBehindLatest how far behind the shard's tip the attempt was when it stopped (None: written by 0.1.0)
 * @param moreAvailable      whether the attempt stopped with records known to lie ahead (a limit, not the tip), so
 *                           the driver plans the shard again without first checking it (None: written by 0.1.0)
 * @param lastArrivalMs      when the last record read arrived in Kinesis, by the service's clock (None: no record
 *                           read, or written by 0.1.0)
 */
final case class ShardEndRecord(
    stream: String,
    shardId: String,
    batch: Long,
    start: ShardPosition,
    end: ShardPosition,
    recordCount: Long,
    millisBehindLatest: Option[Long] = None,
    moreAvailable: Option[Boolean] = None,
    lastArrivalMs: Option[Long] = None) {

  def toJson: String = {
    val later = millisBehindLatest.map(ms => "millisBehindLatest" -> Json.number(ms)).toSeq ++
      moreAvailable.map(more => "moreAvailable" -> Json.bool(more)) ++
      lastArrivalMs.map(ms => "lastArrivalMs" -> Json.number(ms))
    Json.write(Json.obj(Seq(
      "version" -> Json.number(if (later.isEmpty) 1 else ShardEndRecord.Version),
      "stream" -> Json.text(stream),
      "shardId" -> Json.text(shardId),
      "batch" -> Json.number(batch),
      "start" -> ShardPosition.toJson(start),
      "end" -> ShardPosition.toJson(end),
      "recordCount" -> Json.number(recordCount)) ++ later: _*))
  }

  /** Whether two attempts read the same records: same range, whatever they counted. */
  def sameRange(other: ShardEndRecord): Boolean =
    stream == other.stream && shardId == other.shardId && batch == other.batch && start == other.start &&
      end == other.end
}

object ShardEndRecord {
  /** Version 2 adds millisBehindLatest, moreAvailable and lastArrivalMs; a record without them is written as version 1. */
  val Version = 2

  def fromJson(raw: String, where: String): ShardEndRecord = {
    val what = s"the shard end record $where"
    val node = Json.read(raw, what)
    Json.checkVersion(node, Version, what)
    ShardEndRecord(
      stream = Json.field(node, "stream", what).asText(),
      shardId = Json.field(node, "shardId", what).asText(),
      batch = Json.field(node, "batch", what).asLong(),
      start = ShardPosition.fromJson(Json.field(node, "start", what), what),
      end = ShardPosition.fromJson(Json.field(node, "end", what), what),
      recordCount = Json.field(node, "recordCount", what).asLong(),
      millisBehindLatest = Json.optionalLong(node, "millisBehindLatest"),
      moreAvailable = Json.optionalBoolean(node, "moreAvailable"),
      lastArrivalMs = Json.optionalLong(node, "lastArrivalMs"))
  }
}
