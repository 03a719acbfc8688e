package io.github.sparkkinesis.sink

import java.util.concurrent.ConcurrentHashMap

import io.github.sparkkinesis.client.{ClientSettings, KinesisClientException, SharedClients}

/**
 * Confirms that a stream exists before the sink writes to it, once per stream and settings in this JVM, so a
 * missing stream fails in a second with a clear message instead of after `kinesis.sink.recordTtl` of retries.
 */
private[sink] object StreamCheck {
  private val confirmed = ConcurrentHashMap.newKeySet[(ClientSettings, String)]()

  def ensureExists(client: ClientSettings, stream: String): Unit =
    if (!confirmed.contains((client, stream))) {
      try SharedClients(client).listShards(stream)
      catch {
        case e: KinesisClientException =>
          throw new KinesisSinkException(s"Cannot write to Kinesis stream '$stream': ${e.getMessage}", e)
      }
      confirmed.add((client, stream))
    }
}
