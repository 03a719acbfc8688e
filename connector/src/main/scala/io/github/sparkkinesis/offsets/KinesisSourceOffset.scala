package io.github.sparkkinesis.offsets

import org.apache.spark.sql.connector.read.streaming.Offset

/**
 * What the source tracks of one shard: where the next read starts, and the parent shards (among those
 * tracked) that must be read to their end before this shard may be read, so per-key order survives resharding.
 */
final case class ShardState(position: ShardPosition, waitsFor: Seq[String]) {
  def isFinished: Boolean = position == ShardPosition.ShardEnd
}

object ShardState {

  /** The shards a micro-batch reads: unfinished, and every parent they wait for finished or forgotten. */
  def readable(shards: Map[String, ShardState]): Seq[String] =
    shards.collect {
      case (id, state) if !state.isFinished && state.waitsFor.forall(p => shards.get(p).forall(_.isFinished)) => id
    }.toSeq.sorted
}

/**
 * The source's offset: the connector's own count of planned micro-batches, and, per stream and shard, where
 * that micro-batch starts reading. Where it ends is decided by the tasks that read it and recorded in the
 * [[io.github.sparkkinesis.metadata.ShardEndStore]] under the same batch number.
 */
final case class KinesisSourceOffset(batch: Long, streams: Map[String, Map[String, ShardState]]) extends Offset {

  override def json(): String = {
    val streamsNode = Json.obj(streams.toSeq.map { case (stream, shards) =>
      stream -> Json.obj(shards.toSeq.map { case (shardId, state) =>
        val fields = Seq("position" -> ShardPosition.toJson(state.position)) ++
          (if (state.waitsFor.isEmpty) Nil else Seq("waitsFor" -> Json.array(state.waitsFor.sorted)))
        shardId -> Json.obj(fields: _*)
      }: _*)
    }: _*)
    Json.write(Json.obj(
      "version" -> Json.number(KinesisSourceOffset.Version),
      "batch" -> Json.number(batch),
      "streams" -> streamsNode))
  }

  /** The shards of `stream` that the micro-batch ending at this offset reads. */
  def readableShards(stream: String): Seq[String] = ShardState.readable(streams.getOrElse(stream, Map.empty))
}

object KinesisSourceOffset {
  val Version = 1

  def fromJson(raw: String): KinesisSourceOffset = {
    val what = "the Kinesis source offset in the checkpoint"
    val node = Json.read(raw, what)
    Json.checkVersion(node, Version, what)
    val streams = Json.fields(Json.field(node, "streams", what)).map { case (stream, shards) =>
      stream -> Json.fields(shards).map { case (shardId, state) =>
        val position = ShardPosition.fromJson(Json.field(state, "position", what), what)
        val waitsFor = Option(state.get("waitsFor")).map(Json.strings).getOrElse(Nil)
        shardId -> ShardState(position, waitsFor)
      }.toMap
    }.toMap
    KinesisSourceOffset(Json.field(node, "batch", what).asLong(), streams)
  }
}
