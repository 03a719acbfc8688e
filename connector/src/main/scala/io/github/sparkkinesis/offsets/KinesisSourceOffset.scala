package io.github.sparkkinesis.offsets

import org.apache.spark.sql.connector.read.streaming.Offset

/**
 * What the source tracks of one shard: where the next read starts, and the parent shards that must be read to
 * their end before this shard may be read, so per-key order survives resharding.
 */
final case class ShardState(position: ShardPosition, waitsFor: Seq[String]) {
  def isFinished: Boolean = position == ShardPosition.ShardEnd
}

object ShardState {

  /** The shards that may be read: unfinished, and every parent they wait for finished or forgotten. */
  def readable(shards: Map[String, ShardState]): Seq[String] =
    shards.collect {
      case (id, state) if !state.isFinished && state.waitsFor.forall(p => shards.get(p).forall(_.isFinished)) => id
    }.toSeq.sorted
}

/**
 * How a micro-batch's first attempt reads one shard: at most `maxRecords` Kinesis records (a read limit's share),
 * and only records that arrived before `arrivedBeforeMs` (the end of a Trigger.AvailableNow run). Later attempts
 * read exactly to the end the first one recorded, whatever these say.
 */
final case class ShardRead(maxRecords: Option[Long], arrivedBeforeMs: Option[Long])

object ShardRead {
  val Unbounded: ShardRead = ShardRead(None, None)
}

/**
 * The source's offset: the connector's own count of planned micro-batches, and, per stream and shard, where
 * that micro-batch starts reading. Where it ends is decided by the tasks that read it and recorded in the
 * [[io.github.sparkkinesis.metadata.ShardEndStore]] under the same batch number.
 *
 * @param reads the shards the micro-batch reads and how, per stream; None (offsets of version 1) reads every
 *              readable shard without bounds
 */
final case class KinesisSourceOffset(
    batch: Long,
    streams: Map[String, Map[String, ShardState]],
    reads: Option[Map[String, Map[String, ShardRead]]] = None)
  extends Offset {

  override def json(): String = {
    val streamsNode = Json.obj(streams.toSeq.map { case (stream, shards) =>
      stream -> Json.obj(shards.toSeq.map { case (shardId, state) =>
        val fields = Seq("position" -> ShardPosition.toJson(state.position)) ++
          (if (state.waitsFor.isEmpty) Nil else Seq("waitsFor" -> Json.array(state.waitsFor.sorted)))
        shardId -> Json.obj(fields: _*)
      }: _*)
    }: _*)
    val readsField = reads.toSeq.map { byStream =>
      "reads" -> Json.obj(byStream.toSeq.map { case (stream, shards) =>
        stream -> Json.obj(shards.toSeq.map { case (shardId, read) =>
          shardId -> Json.obj(read.maxRecords.map(n => "maxRecords" -> Json.number(n)).toSeq ++
            read.arrivedBeforeMs.map(ms => "arrivedBeforeMs" -> Json.number(ms)): _*)
        }: _*)
      }: _*)
    }
    val version = if (reads.isEmpty) 1 else KinesisSourceOffset.Version
    Json.write(Json.obj(Seq(
      "version" -> Json.number(version),
      "batch" -> Json.number(batch),
      "streams" -> streamsNode) ++ readsField: _*))
  }

  /** The shards of `stream` that the micro-batch ending at this offset reads, with how it reads each. */
  def shardsRead(stream: String): Seq[(String, ShardRead)] = reads match {
    case Some(byStream) => byStream.getOrElse(stream, Map.empty).toSeq.sortBy(_._1)
    case None           => ShardState.readable(streams.getOrElse(stream, Map.empty)).map(_ -> ShardRead.Unbounded)
  }
}

object KinesisSourceOffset {
  /** Version 2 adds `reads`; an offset without it is still written as version 1, which 0.1.0 reads. */
  val Version = 2

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
    val reads = Option(node.get("reads")).map { byStream =>
      Json.fields(byStream).map { case (stream, shards) =>
        stream -> Json.fields(shards).map { case (shardId, read) =>
          shardId -> ShardRead(Json.optionalLong(read, "maxRecords"), Json.optionalLong(read, "arrivedBeforeMs"))
        }.toMap
      }.toMap
    }
    KinesisSourceOffset(Json.field(node, "batch", what).asLong(), streams, reads)
  }
}
