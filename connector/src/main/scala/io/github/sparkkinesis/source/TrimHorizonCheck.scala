package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.{IteratorStart, KinesisClient, KinesisClientException}
import io.github.sparkkinesis.offsets.{ShardPosition, ShardState}
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, AtSequenceNumber, compareSequenceNumbers}

/**
 * Finds shards whose position has fallen behind the trim horizon: the oldest record Kinesis still retains comes
 * after the record the position names, so records between them may have expired unread. Kinesis itself would
 * silently resume at the trim horizon. Two calls per shard with a sequence-number position; run once when a query
 * (re)starts, which is when a query stopped for longer than the retention period meets this.
 */
private[source] object TrimHorizonCheck {

  /** The shards found behind the horizon, with the oldest retained sequence number; shards not answering are skipped. */
  def behindHorizon(client: KinesisClient, stream: String, shards: Map[String, ShardState]): Seq[(String, String)] =
    shards.toSeq.sortBy(_._1).flatMap { case (shardId, state) =>
      sequenceNumberOf(state.position).flatMap { ours =>
        try {
          val page = client.getRecords(stream, client.shardIterator(stream, shardId, IteratorStart.TrimHorizon), 1)
          page.records.headOption.map(_.sequenceNumber).filter(oldest => compareSequenceNumbers(oldest, ours) > 0)
            .map(shardId -> _)
        } catch {
          case _: KinesisClientException => None // no verdict; the reading tasks will meet the problem, if any
        }
      }
    }

  private def sequenceNumberOf(position: ShardPosition): Option[String] = position match {
    case AfterSequenceNumber(seq) => Some(seq)
    case AtSequenceNumber(seq)    => Some(seq)
    case _                        => None
  }
}
