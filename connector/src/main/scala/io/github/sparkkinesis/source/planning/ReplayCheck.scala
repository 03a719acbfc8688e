package io.github.sparkkinesis.source.planning

import java.time.Instant

import io.github.sparkkinesis.metadata.ShardEndRecord
import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardPosition}
import io.github.sparkkinesis.offsets.ShardPosition.{compareSequenceNumbers, AfterSequenceNumber}

/**
 * A micro-batch planned before the query stopped and read again after it restarted: which of its records retention has
 * trimmed since. The driver decides this once, when it plans the batch again, so `kinesis.failOnDataLoss` is applied in
 * one place and its message appears once, instead of every task attempt failing on the same missing records. Surely
 * lost: every record the batch read of a shard, when the record it recorded as its end comes before the oldest one
 * Kinesis retains (or the shard has left the listing), and a first read from AT_SEQUENCE_NUMBER of a record that has
 * expired, or from inside a KPL aggregate that has. Where only the batch's start lies behind the horizon, only the
 * tasks can tell, by counting the records they read again against those recorded ([[ShardReader]]).
 */
private[source] object ReplayCheck {

  /** What `batch` lost of one shard: the records after `start`, up to `end` (None: never recorded). */
  final case class Lost(
      stream: String,
      shardId: String,
      start: ShardPosition,
      end: Option[ShardPosition],
      records: Option[Long],
      lastArrivalMs: Option[Long],
      oldestRetained: Option[String]) {
    def describe: String = {
      val what = records.fold("its unread records")(n => s"$n record(s)")
      val range = s"after $start${end.fold("")(e => s" up to $e")}"
      val arrived = lastArrivalMs.fold("")(ms => s", the last of them arrived at ${Instant.ofEpochMilli(ms)}")
      val horizon = oldestRetained.fold("the shard has expired whole")(seq => s"the oldest retained record is $seq")
      s"$stream/$shardId: $what $range$arrived; $horizon"
    }
  }

  /** The sequence numbers a shard's check needs: its start's, and its recorded end's. */
  def candidates(
      offset: KinesisSourceOffset,
      records: Map[(String, String), Option[ShardEndRecord]]): Map[String, Seq[String]] =
    records.toSeq.collect {
      case ((s, id), Some(r)) if r.recordCount > 0 && r.end.isInstanceOf[AfterSequenceNumber] => s -> id
      case ((s, id), None) if ShardPosition.firstRecordOf(offset.streams(s)(id).position).isDefined => s -> id
    }.groupBy(_._1).map { case (s, ids) => s -> ids.map(_._2).sorted }

  /**
   * The shards of the batch ending at `offset` whose records surely expired, given the records its tasks wrote and, per
   * checked shard, the oldest retained sequence number (None: the shard left the listing; absent: unknown).
   */
  def lost(
      offset: KinesisSourceOffset,
      records: Map[(String, String), Option[ShardEndRecord]],
      horizons: Map[(String, String), Option[String]]): Seq[Lost] =
    horizons.toSeq.sortBy(_._1).flatMap { case ((s, id), horizon) =>
      val start = offset.streams(s)(id).position
      def before(seq: String) = horizon.forall(h => compareSequenceNumbers(h, seq) > 0)
      records.get((s, id)).flatten match {
        case Some(r) => r.end match {
            case AfterSequenceNumber(last) if r.recordCount > 0 && before(last) =>
              Some(Lost(s, id, start, Some(r.end), Some(r.recordCount), r.stats.flatMap(_.lastArrivalMs), horizon))
            case _ => None
          }
        case None =>
          ShardPosition.firstRecordOf(start).filter(before).map(_ => Lost(s, id, start, None, None, None, horizon))
      }
    }

  /** The message for the batch's lost records, saying what to do. */
  def message(batch: Long, lost: Seq[Lost]): String =
    s"Batch $batch was planned before the query stopped and is read again now, but records it read have been " +
      s"trimmed by the stream's retention period since (the query was stopped for longer than that, or the stream " +
      s"was deleted and created again): ${lost.map(_.describe).mkString("; ")}."
}
