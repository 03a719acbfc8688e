package io.github.sparkkinesis.source.planning

import io.github.sparkkinesis.metadata.{ShardEndRecord, ShardEndStore, TaskEndRecord}
import io.github.sparkkinesis.offsets.KinesisSourceOffset
import io.github.sparkkinesis.source.realtime.RealTimeLineage

/**
 * Where a micro-batch's tasks ended the shards it read, from the [[ShardEndStore]]: one read per task (several at
 * once), not one per shard. The last batch's are kept once all are there: the next batch's planning and the progress
 * metrics both need them; a missing one is looked for again next time. A real-time batch's offset holds where it ended;
 * where records lay ahead of that, which `kinesis.failOnDataLoss` needs after a restart, the driver records when it
 * merges the tasks' positions ([[recordRealTime]]).
 */
private[source] final class BatchEnds(store: ShardEndStore) {
  import BatchEnds.{RealTimeShardsPerRecord, RealTimeTask}

  private var last: Option[(Long, Map[(String, String), Option[ShardEndRecord]])] = None

  /** Per (stream, shard) the batch ending at `offset` read: its end record, None where none was written. */
  def of(offset: KinesisSourceOffset): Map[(String, String), Option[ShardEndRecord]] = last match {
    case Some((batch, ends)) if batch == offset.batch => ends
    case _ =>
      val planned = if (offset.batch < 0) Nil else offset.plannedReads
      val records = store.getAll(offset.batch, planned.map(_.task).distinct)
      val ends = planned.map { r =>
        val found = records.get(r.task).flatMap(_.ends.find(e => e.stream == r.stream && e.shardId == r.shardId))
          .orElse(if (offset.isLegacy) store.legacyGet(r.stream, offset.batch, r.shardId) else None)
        (r.stream, r.shardId) -> found
      }.toMap
      if (ends.values.forall(_.isDefined)) last = Some(offset.batch -> ends)
      ends
  }

  /**
   * What [[of]] last found for the batch ending at `offset`, without reading the store: empty unless that batch's
   * records were all found when last asked for.
   */
  def cached(offset: KinesisSourceOffset): Map[(String, String), Option[ShardEndRecord]] = last match {
    case Some((batch, ends)) if batch == offset.batch => ends
    case _ => Map.empty
  }

  /**
   * Records where the tasks of real-time batch `batch` ended a shard with records ahead ([[TrimHorizonCheck.ahead]]; a
   * caught-up shard needs no record), [[RealTimeShardsPerRecord]] shards to a record, so a record stays far below
   * DynamoDB's item size whatever the shard count, and a batch that ends caught up writes nothing.
   */
  def recordRealTime(batch: Long, ends: Seq[ShardEndRecord]): Unit =
    ends.filter(TrimHorizonCheck.ahead).sortBy(e => (e.stream, e.shardId)).grouped(RealTimeShardsPerRecord)
      .zipWithIndex.foreach { case (chunk, i) => store.recordIfAbsent(TaskEndRecord(batch, RealTimeTask - i, chunk)) }

  /**
   * Where the tasks of the real-time batch ending at `offset` ended a shard with records ahead, per (stream, shard):
   * only where the record ends where the offset does (a record of a run of the batch that never reached Spark's log,
   * before a restart, may end elsewhere). Empty for any other offset.
   */
  def ofRealTime(offset: KinesisSourceOffset): Map[(String, String), ShardEndRecord] =
    if (offset.batch < 0) Map.empty
    else {
      val shards = offset.streams.values.map(_.size).sum
      val records = (0 until (shards + RealTimeShardsPerRecord - 1) / RealTimeShardsPerRecord).map(RealTimeTask - _)
      store.getAll(offset.batch, records).values.toSeq.flatMap(_.ends).collect {
        case e if offset.streams.get(e.stream).flatMap(_.get(e.shardId)).exists(_.position == e.end) =>
          (e.stream, e.shardId) -> e
      }.toMap
    }
}

private[source] object BatchEnds {

  /**
   * The task number of a real-time batch's first record, the next ones counting down: numbers no task has, below every
   * slot ([[RealTimeLineage.SlotBase]]).
   */
  val RealTimeTask: Int = RealTimeLineage.SlotBase - 1

  /** Shards per record of a real-time batch: about 100 KB of JSON. */
  val RealTimeShardsPerRecord = 250
}
