package io.github.sparkkinesis.metadata

import io.github.sparkkinesis.offsets.Json

/**
 * Where task `task` of micro-batch `batch` ended each shard it read, as recorded by the first of its attempts to hand
 * over all its rows. One record per task keeps the driver's reads per batch to one per task, not one per shard. A
 * record a real-time batch writes names the `plan` (one planning of the batch) it belongs to, so that a later planning
 * of the same batch, after a restart, never takes it for its own.
 */
final case class TaskEndRecord(batch: Long, task: Int, ends: Seq[ShardEndRecord], plan: Option[String] = None) {

  def toJson: String = Json.write(Json.obj(Seq(
    "version" -> Json.number(if (plan.isEmpty) 1 else TaskEndRecord.Version),
    "batch" -> Json.number(batch),
    "task" -> Json.number(task.toLong),
    "shards" -> Json.arrayOf(sorted.map(_.toNode(withVersion = false)))) ++ plan.map(p => "plan" -> Json.text(p)): _*))

  /** Whether two attempts read the same records of every shard, whatever they counted. */
  def sameRanges(other: TaskEndRecord): Boolean =
    batch == other.batch && task == other.task && sorted.size == other.sorted.size &&
      sorted.zip(other.sorted).forall { case (a, b) => a.sameRange(b) }

  private def sorted: Seq[ShardEndRecord] = ends.sortBy(e => (e.stream, e.shardId))
}

object TaskEndRecord {

  /** Version 2 adds `plan`; a record without one is written as version 1, which releases before it read. */
  val Version = 2

  def fromJson(raw: String, where: String): TaskEndRecord = {
    val what = s"the task end record $where"
    val node = Json.read(raw, what)
    Json.checkVersion(node, Version, what)
    val shards = Json.field(node, "shards", what)
    TaskEndRecord(
      batch = Json.field(node, "batch", what).asLong(),
      task = Json.field(node, "task", what).asInt(),
      ends = (0 until shards.size()).map(i => ShardEndRecord.fromNode(shards.get(i), what)),
      plan = Option(node.get("plan")).filterNot(_.isNull).map(_.asText()))
  }
}
