package io.github.sparkkinesis.sink

import io.github.sparkkinesis.client.{
  AccessException,
  KinesisClientException,
  RequestRefusedException,
  ResourceMissingException
}

/** What the sink's own producers (PutRecords, PutRecord) make of a failed call and of a record's time to live. */
private[sink] object SinkFailures {

  /**
   * Whether a call that failed with `e` is worth sending again until the record's TTL: throttling, an endpoint out of
   * reach, a failure on the way (a reset connection, a timeout); not what Kinesis would answer again (no permission, no
   * such stream, a request it refuses as it stands).
   */
  def passing(e: KinesisClientException): Boolean = e match {
    case _: AccessException | _: ResourceMissingException | _: RequestRefusedException => false
    case _ => true
  }

  /** When a record handed over at `now` with a TTL of `ttlMs` runs out of time; never, past the clock's range. */
  def deadline(now: Long, ttlMs: Long): Long =
    if (now > 0 && ttlMs > Long.MaxValue - now) Long.MaxValue else now + ttlMs

  /** The result of `record` that will not be written: `how` it was sent, and `why` it failed. */
  def failed(record: OutgoingRecord, how: String, why: String): SendResult.Failed =
    SendResult.Failed(s"Could not write a row of ${record.size} bytes to Kinesis stream '${record.stream}' with " +
      s"$how: $why The task fails and Spark retries it; rows it had already written may be written twice (the " +
      "sink delivers at least once).")
}
