package io.github.sparkkinesis.source.planning

import io.github.sparkkinesis.metadata.{ShardEndRecord, ShardEndStore}
import io.github.sparkkinesis.offsets.KinesisSourceOffset

/**
 * Where a micro-batch's tasks ended the shards it read, from the [[ShardEndStore]]: one read per task (several at
 * once), not one per shard. The last batch's are kept once all are there: the next batch's planning and the progress
 * metrics both need them; a missing one is looked for again next time.
 */
private[source] final class BatchEnds(store: ShardEndStore) {
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
}
