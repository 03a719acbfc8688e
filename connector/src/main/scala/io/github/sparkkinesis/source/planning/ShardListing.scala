package io.github.sparkkinesis.source.planning

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException,
  Backoff,
  KinesisClient,
  KinesisClientException,
  ResourceMissingException,
  ShardDescription,
  UnreachableException
}

/**
 * The driver's view of a stream's shards: listed again when asked to or once `intervalMs` has passed. A listing that
 * fails for a passing reason (throttling, a connection reset, a server error) keeps the previous one and is tried again
 * after a jittered back-off; with no previous listing (a query starting) it is retried in place. Only once failures
 * have lasted `failureTimeoutMs` does the query fail, with the last error. A missing stream and refused credentials
 * fail at once: waiting will not fix them; so does an endpoint that cannot be reached (unknown host, connection
 * refused) before the first listing of this run succeeded, almost always a wrong endpoint or region rather than an
 * outage that retrying would ride out.
 */
private[source] final class ShardListing(
    client: () => KinesisClient,
    stream: String,
    intervalMs: Long,
    failureTimeoutMs: Long,
    backoff: Backoff,
    clock: () => Long,
    sleep: Long => Unit = Thread.sleep) {

  private val log = LoggerFactory.getLogger(getClass)
  private var listing: Option[Seq[ShardDescription]] = None
  private var listedAtMs = Long.MinValue / 2
  private var retryAtMs = Long.MinValue / 2
  private val failures = new FailureWindow(s"Listing the shards of stream $stream", failureTimeoutMs, clock)

  /** The shards, listed again when `force`d or when the listing is older than `intervalMs`. */
  def current(force: Boolean): Seq[ShardDescription] = {
    val now = clock()
    listing match {
      case Some(shards) if !force && now - listedAtMs < intervalMs => shards
      case Some(shards) if now < retryAtMs => shards
      case Some(shards) => attempt().getOrElse(shards)
      case None => untilListed()
    }
  }

  private def untilListed(): Seq[ShardDescription] = {
    var result = attempt()
    while (result.isEmpty) {
      sleep(math.max(0L, retryAtMs - clock()))
      result = attempt()
    }
    result.get
  }

  private def attempt(): Option[Seq[ShardDescription]] =
    try {
      val shards = client().listShards(stream)
      listing = Some(shards)
      listedAtMs = clock()
      failures.succeeded()
      backoff.reset()
      Some(shards)
    } catch {
      case e @ (_: AccessException | _: ResourceMissingException) => throw e
      case e: UnreachableException if listing.isEmpty => throw e
      case e: KinesisClientException =>
        failures.failed(e)
        retryAtMs = clock() + math.max(1L, backoff.nextDelayMs())
        log.warn(s"Listing the shards of stream $stream failed; trying again: ${e.getMessage}")
        None
    }
}
