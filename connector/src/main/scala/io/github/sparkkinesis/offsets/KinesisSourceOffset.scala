package io.github.sparkkinesis.offsets

import org.apache.spark.sql.connector.read.streaming.Offset

/**
 * What the source tracks of one shard: where the next read starts, and the parent shards that must be read to their end
 * before this shard may be read, so per-key order survives resharding.
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
 * How a micro-batch's first attempt reads one shard: at most `maxRecords` Kinesis records and `maxBytes` bytes of them
 * (a read limit's shares), and only records that arrived before `arrivedBeforeMs` (the end of a Trigger.AvailableNow
 * run). Later attempts read exactly to the end the first one recorded, whatever these say. `task` is the micro-batch's
 * task that reads the shard (None in offsets of version 2 and before, whose batches read each shard in a task of its
 * own). `maxBytes` needs no new offset version: a release that does not know it reads a batch it plans again after a
 * downgrade without that cap, which makes the batch larger, never different between attempts.
 */
final case class ShardRead(
    maxRecords: Option[Long],
    arrivedBeforeMs: Option[Long],
    task: Option[Int] = None,
    maxBytes: Option[Long] = None)

object ShardRead {
  val Unbounded: ShardRead = ShardRead(None, None)
}

/**
 * The source's offset: the connector's own count of planned micro-batches, and, per stream and shard, where that
 * micro-batch starts reading. Where it ends is decided by the tasks that read it and recorded in the
 * [[io.github.sparkkinesis.metadata.ShardEndStore]] under the same batch number.
 *
 * @param reads
 *   the shards the micro-batch reads and how, per stream; None (offsets of version 1) reads every readable shard
 *   without bounds
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
            read.arrivedBeforeMs.map(ms => "arrivedBeforeMs" -> Json.number(ms)) ++
            read.task.map(t => "task" -> Json.number(t.toLong)) ++
            read.maxBytes.map(n => "maxBytes" -> Json.number(n)): _*)
        }: _*)
      }: _*)
    }
    val version = reads match {
      case _ if hasSubSequencePositions => KinesisSourceOffset.Version
      case None => 1
      case Some(byStream) if byStream.values.forall(_.values.forall(_.task.isEmpty)) => 2
      case Some(_) => 3
    }
    Json.write(Json.obj(Seq(
      "version" -> Json.number(version),
      "batch" -> Json.number(batch),
      "streams" -> streamsNode) ++ readsField: _*))
  }

  /**
   * Equal when the JSON is, as Spark's `Offset` defines it, but without writing the JSON of two offsets that are both
   * this connector's: with thousands of shards that is most of the driver's work per batch. The JSON lists a shard's
   * parents in id order, whatever order a listing named them in, so they are compared in that order too: Spark compares
   * the offset it logged for the last batch with the one a look returned (parsed from that JSON) to decide whether
   * anything is new, and a merge's child naming its parents out of order must not make an unchanged offset look new
   * (Spark would run the last batch again). Spark's `hashCode` of the JSON stays consistent with this.
   */
  override def equals(other: Any): Boolean = other match {
    case o: KinesisSourceOffset =>
      (this eq o) || (batch == o.batch && reads == o.reads && inJsonOrder == o.inJsonOrder)
    case o: Offset => json() == o.json()
    case _ => false
  }

  /** Whether a shard stands inside a KPL aggregate, which only version 4 can say (an older release must refuse it). */
  private def hasSubSequencePositions: Boolean =
    streams.values.exists(_.values.exists(_.position.isInstanceOf[ShardPosition.AfterSubSequenceNumber]))

  /** The shards' states with their parents in id order, as [[json]] writes them. */
  private lazy val inJsonOrder: Map[String, Map[String, ShardState]] = streams.map { case (stream, shards) =>
    stream -> shards.map { case (id, state) =>
      id -> (if (state.waitsFor.lengthCompare(2) < 0) state else state.copy(waitsFor = state.waitsFor.sorted))
    }
  }

  /**
   * Every shard the micro-batch ending at this offset reads, with how and in which task. Offsets before version 3
   * planned a task per shard: theirs are numbered in (stream, shard) order.
   */
  def plannedReads: Seq[PlannedRead] =
    streams.keys.toSeq.sorted.flatMap(s => shardsRead(s).map { case (id, read) => (s, id, read) })
      .zipWithIndex.map { case ((s, id, read), i) => PlannedRead(s, id, read, read.task.getOrElse(i)) }

  /** Whether the micro-batch was planned before version 3, with one record per shard in the metadata store. */
  def isLegacy: Boolean = reads.forall(_.values.forall(_.values.forall(_.task.isEmpty)))

  /** The shards of `stream` that the micro-batch ending at this offset reads, with how it reads each. */
  def shardsRead(stream: String): Seq[(String, ShardRead)] = reads match {
    case Some(byStream) => byStream.getOrElse(stream, Map.empty).toSeq.sortBy(_._1)
    case None => ShardState.readable(streams.getOrElse(stream, Map.empty)).map(_ -> ShardRead.Unbounded)
  }
}

/** One shard a micro-batch reads: how, and in which of its tasks. */
final case class PlannedRead(stream: String, shardId: String, read: ShardRead, task: Int)

object KinesisSourceOffset {

  /**
   * Version 2 adds `reads`, version 3 each read's `task`, version 4 positions inside a KPL aggregate
   * (AFTER_SUB_SEQUENCE_NUMBER, which a real-time batch ends at when it has handed over part of an aggregate). An
   * offset without them is still written as the version that introduced what it has, so 0.1.0 reads offsets without
   * `reads`, and a release before version 4 refuses only an offset that stands inside an aggregate, with a message
   * saying that a newer spark-kinesis wrote it.
   */
  val Version = 4

  /**
   * `offset` as this source's offset. Spark hands back offsets it read from the checkpoint's log as its own
   * `SerializedOffset` in some places (the progress metrics after a restart), so those are parsed from their JSON.
   */
  def of(offset: Offset): KinesisSourceOffset = offset match {
    case ours: KinesisSourceOffset => ours
    case other => fromJson(other.json())
  }

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
          shardId -> ShardRead(
            Json.optionalLong(read, "maxRecords"),
            Json.optionalLong(read, "arrivedBeforeMs"),
            Json.optionalLong(read, "task").map(_.toInt),
            Json.optionalLong(read, "maxBytes"))
        }.toMap
      }.toMap
    }
    KinesisSourceOffset(Json.field(node, "batch", what).asLong(), streams, reads)
  }
}
