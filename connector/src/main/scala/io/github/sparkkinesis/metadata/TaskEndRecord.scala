package io.github.sparkkinesis.metadata

import io.github.sparkkinesis.offsets.Json

/**
 * Where task `task` of micro-batch `batch` ended each shard it read, as recorded by the first of its attempts to hand
 * over all its rows. One record per task keeps the driver's reads per batch to one per task, not one per shard.
 */
final case class TaskEndRecord(batch: Long, task: Int, ends: Seq[ShardEndRecord]) {

  def toJson: String = Json.write(Json.obj(
    "version" -> Json.number(TaskEndRecord.Version),
    "batch" -> Json.number(batch),
    "task" -> Json.number(task.toLong),
    "shards" -> Json.arrayOf(sorted.map(_.toNode(withVersion = false)))))

  /** Whether two attempts read the same records of every shard, whatever they counted. */
  def sameRanges(other: TaskEndRecord): Boolean =
    batch == other.batch && task == other.task && sorted.size == other.sorted.size &&
      sorted.zip(other.sorted).forall { case (a, b) => a.sameRange(b) }

  private def sorted: Seq[ShardEndRecord] = ends.sortBy(e => (e.stream, e.shardId))
}

object TaskEndRecord {
  val Version = 1

  def fromJson(raw: String, where: String): TaskEndRecord = {
    val what = s"the task end record $where"
    val node = Json.read(raw, what)
    Json.checkVersion(node, Version, what)
    val shards = Json.field(node, "shards", what)
    TaskEndRecord(
      batch = Json.field(node, "batch", what).asLong(),
      task = Json.field(node, "task", what).asInt(),
      ends = (0 until shards.size()).map(i => ShardEndRecord.fromNode(shards.get(i), what)))
  }
}
