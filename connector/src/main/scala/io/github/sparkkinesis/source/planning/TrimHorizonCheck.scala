package io.github.sparkkinesis.source.planning

import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}
import io.github.sparkkinesis.offsets.ShardPosition.{compareSequenceNumbers, AfterSequenceNumber}

/**
 * Which tracked shards have fallen behind the trim horizon (the oldest record Kinesis retains comes after the record
 * their position names; Kinesis itself would silently resume at the horizon), and whether records were lost unread
 * there. A position at a record that has expired lost that record. A position after a record that has expired lost
 * records only if some came after it: certain when the shard's last read stopped with records ahead of it, and
 * unknowable otherwise (a shard that stayed quiet for longer than the retention period looks the same). A position
 * inside a KPL aggregate that has expired lost the aggregate's sub-records not handed over.
 */
private[source] object TrimHorizonCheck {

  /** A shard behind the horizon: where it is, where the horizon is, and whether records were surely lost. */
  final case class Behind(shardId: String, position: ShardPosition, oldestRetained: String, surelyLost: Boolean)

  /** The unfinished shards whose position names a record, which the check applies to. */
  def candidates(tracked: Map[String, ShardState]): Seq[String] =
    tracked.collect { case (id, state) if sequenceNumberOf(state.position).isDefined => id }.toSeq.sorted

  /**
   * The shards of `tracked` behind the horizon, given each candidate's oldest retained sequence number and the last
   * shard-end record of the shards the previous batch read.
   */
  def behind(
      tracked: Map[String, ShardState],
      oldest: Map[String, String],
      lastRead: Map[String, ShardEndRecord]): Seq[Behind] =
    oldest.toSeq.sortBy(_._1).flatMap { case (id, horizon) =>
      val position = tracked(id).position
      sequenceNumberOf(position).filter(ours => compareSequenceNumbers(horizon, ours) > 0).map { _ =>
        Behind(id, position, horizon, ShardPosition.firstRecordOf(position).isDefined || lastRead.get(id).exists(ahead))
      }
    }

  /** Whether the read that ended with `record` stopped with records ahead of its end. */
  def ahead(record: ShardEndRecord): Boolean = record.stats.exists(s => s.moreAvailable || s.millisBehindLatest > 0)

  private def sequenceNumberOf(position: ShardPosition): Option[String] = position match {
    case AfterSequenceNumber(seq) => Some(seq)
    case other => ShardPosition.firstRecordOf(other)
  }
}
