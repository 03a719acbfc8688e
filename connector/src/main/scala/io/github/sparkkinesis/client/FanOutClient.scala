package io.github.sparkkinesis.client

/**
 * The enhanced fan-out side of Kinesis in connector terms: stream consumers (RegisterStreamConsumer and friends) and
 * SubscribeToShard, whose pushed events are handed out one at a time by a [[ShardSubscription]]. Every failure is a
 * [[KinesisClientException]]; a subscribe refused because one is still open is a [[SubscriptionBusyException]].
 */
trait FanOutClient {

  /** The ARN of the stream (DescribeStreamSummary), which consumers are registered against. */
  def streamArn(streamName: String): String

  /** The consumer of that name registered on the stream, if any (DescribeStreamConsumer). */
  def describeConsumer(streamArn: String, consumerName: String): Option[ConsumerDescription]

  /** The consumer with this ARN, if it exists (DescribeStreamConsumer). */
  def describeConsumerByArn(consumerArn: String): Option[ConsumerDescription]

  /**
   * Registers a consumer with `tags` (RegisterStreamConsumer; with tags it needs kinesis:TagResource too); it is
   * CREATING for a few seconds before it is ACTIVE.
   */
  def registerConsumer(streamArn: String, consumerName: String, tags: Map[String, String]): ConsumerDescription

  /** Every consumer registered on the stream, whatever its status (ListStreamConsumers, all pages). */
  def listConsumers(streamArn: String): Seq[ConsumerDescription]

  /** The tags of a consumer (ListTagsForResource). */
  def consumerTags(consumerArn: String): Map[String, String]

  /** Adds or overwrites tags of a consumer (TagResource). */
  def tagConsumer(consumerArn: String, tags: Map[String, String]): Unit

  /** Deregisters a consumer (DeregisterStreamConsumer); its subscriptions end. */
  def deregisterConsumer(consumerArn: String): Unit

  /** Opens a subscription to one shard for one consumer, starting at `start` (SubscribeToShard). */
  def subscribeToShard(consumerArn: String, shardId: String, start: IteratorStart): ShardSubscription
}

/** A stream consumer as DescribeStreamConsumer shows it; `status` is CREATING, ACTIVE or DELETING. */
final case class ConsumerDescription(name: String, arn: String, status: String, createdAtMillis: Long) {
  def isActive: Boolean = status == "ACTIVE"
}

/**
 * One open SubscribeToShard call. Events are pulled: the service pushes only as far as the reader has asked, so an
 * unread subscription holds a few events at most. Thread-safe between the SDK's threads and one reader.
 */
trait ShardSubscription {

  /** The next signal, waiting at most `timeoutMs`; None when nothing came in that time. */
  def next(timeoutMs: Long): Option[SubscriptionSignal]

  /** Ends the subscription; further signals are dropped. Idempotent. */
  def cancel(): Unit
}

/** What a subscription hands its reader: an event, its normal end (after at most 5 minutes), or its failure. */
sealed trait SubscriptionSignal

object SubscriptionSignal {

  /**
   * One SubscribeToShardEvent. `childShardIds` is non-empty only in the last event of a closed shard (AWS; the emulator
   * never sends it); `continuationSequenceNumber` is where the subscription stands.
   */
  final case class Event(
      records: Seq[KinesisRecord],
      continuationSequenceNumber: Option[String],
      millisBehindLatest: Long,
      childShardIds: Seq[String]) extends SubscriptionSignal

  /** The service ended the subscription normally (every subscription ends within 5 minutes). */
  case object Completed extends SubscriptionSignal

  /** The subscription failed (connection reset, throttled, consumer gone, ...). */
  final case class Failed(error: KinesisClientException) extends SubscriptionSignal
}
