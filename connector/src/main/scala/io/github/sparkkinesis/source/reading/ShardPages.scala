package io.github.sparkkinesis.source.reading

import io.github.sparkkinesis.client.{Backoff, KinesisClient, RecordBatch}
import io.github.sparkkinesis.metrics.ReadMetrics
import io.github.sparkkinesis.offsets.ShardPosition

/**
 * Where a [[ShardReader]] gets one shard's records, page by page, from `start` on: GetRecords calls ([[PollingPages]])
 * or an enhanced fan-out subscription ([[FanOutPages]]). A page is a [[RecordBatch]] whose `nextIterator` is empty once
 * the shard is read to its end and whose `millisBehindLatest` is 0 at the tip.
 */
private[sparkkinesis] trait ShardPages {

  /** The next page of at most `limit` records; None when throttling or failures lasted until `deadlineMs`. */
  def fetch(deadlineMs: Long, limit: Int): Option[RecordBatch]

  /** Where reading would go on: just after the last record returned so far, or `start`. */
  def position: ShardPosition

  /** Whether the shard is closed and read to its end: nothing more will ever come. */
  def isEnded: Boolean

  /** Goes back to `start` or to just after a record of the last page; the next page reads on from there. */
  def rewind(to: ShardPosition): Unit

  /** GetRecords calls made so far, throttled ones included. */
  def getRecordsCalls: Long

  /** Calls that Kinesis throttled (or refused as busy) so far. */
  def throttledCalls: Long

  /** The metrics these pages count their calls in, and their reader the records it hands over. */
  def metrics: ReadMetrics

  /**
   * How long from now the read-rate cap holds the shard's next GetRecords call back (0 without one, and for a
   * subscription): a later task of the shard starts no sooner ([[io.github.sparkkinesis.metadata.ReadStats.pacedMs]]).
   */
  def msUntilPaced: Long = 0L

  /**
   * These pages go on in the shard's next micro-batch task ([[ShardReader]]), which the driver held back for
   * [[msUntilPaced]] by its own clock: from now on they wait only for what the driver does not.
   */
  def takenOver(): Unit = ()

  /**
   * Waits until the next [[fetch]] may call Kinesis at once (not at all if pacing holds it back past `deadlineMs`: that
   * fetch answers None at once), and says whether that page is read on demand (polling), where a larger limit brings a
   * larger page; a subscription's pages take what was pushed: false, without waiting.
   */
  def awaitNextCall(deadlineMs: Long = Long.MaxValue): Boolean = false

  /**
   * Waits at most `maxWaitMs` for more records after an empty page at the tip, for a reader that reads on for as long
   * as its task runs (real-time mode). Polling needs no wait of its own: its next fetch is paced.
   */
  def awaitMore(maxWaitMs: Long): Unit = ()

  /**
   * The reader is done with these pages: it read them to where its task ends the shard and handed every row over
   * (`handedOver`), or it was cut short (it failed, was interrupted, or its task stopped reading early).
   */
  def close(handedOver: Boolean): Unit = ()
}

private[sparkkinesis] object ShardPages {

  /**
   * The pages a task reads its shard from: a subscription when `settings.fanOut` names a consumer, else polling; they
   * count in the metrics of the query and stream in this JVM.
   */
  def open(
      client: KinesisClient,
      partition: TaskShard,
      settings: ReaderSettings,
      clock: () => Long,
      sleep: Long => Unit): ShardPages = {
    val metrics = ReadMetrics.of(settings.query, partition.stream)
    settings.fanOut.get(partition.stream) match {
      case None =>
        new PollingPages(
          client,
          partition.stream,
          partition.shardId,
          partition.start,
          settings.recordsPerFetch,
          settings.fetchIntervalMs,
          new Backoff(settings.retryBaseMs, settings.retryMaxMs),
          settings.failureTimeoutMs,
          clock,
          sleep,
          metrics,
          settings.maxBytesPerSecondPerShard,
          partition.startIterator)
      case Some(fanOut) =>
        new FanOutPages(
          FanOutClients.of(client),
          client,
          partition.stream,
          partition.shardId,
          partition.start,
          partition.listedClosed,
          fanOut,
          new Backoff(settings.retryBaseMs, settings.retryMaxMs),
          SubscriptionCache.shared,
          clock,
          sleep,
          settings.fanOutEndCheckMs,
          settings.failureTimeoutMs,
          metrics)
    }
  }
}
