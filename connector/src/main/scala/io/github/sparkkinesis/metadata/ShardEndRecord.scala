package io.github.sparkkinesis.metadata

import io.github.sparkkinesis.offsets.{Json, ShardPosition}

/**
 * Where micro-batch `batch` ended in one shard, as recorded by the first task attempt that read it to its
 * stopping point. `start` is kept so that a record left by another query (a reused metadata path) is caught.
 */
final case class ShardEndRecord(
    stream: String,
    shardId: String,
    batch: Long,
    start: ShardPosition,
    end: ShardPosition,
    recordCount: Long) {

  def toJson: String = Json.write(Json.obj(
    "version" -> Json.number(ShardEndRecord.Version),
    "stream" -> Json.text(stream),
    "shardId" -> Json.text(shardId),
    "batch" -> Json.number(batch),
    "start" -> ShardPosition.toJson(start),
    "end" -> ShardPosition.toJson(end),
    "recordCount" -> Json.number(recordCount)))

  /** Whether two attempts read the same records: same range, whatever they counted. */
  def sameRange(other: ShardEndRecord): Boolean =
    stream == other.stream && shardId == other.shardId && batch == other.batch && start == other.start &&
      end == other.end
}

object ShardEndRecord {
  val Version = 1

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
      recordCount = Json.field(node, "recordCount", what).asLong())
  }
}
