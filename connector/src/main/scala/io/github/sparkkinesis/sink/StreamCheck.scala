package io.github.sparkkinesis.sink

import java.util.concurrent.ConcurrentHashMap

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException,
  ClientSettings,
  KinesisClient,
  KinesisClientException,
  SharedClients,
  SinkClient
}

/**
 * Confirms that a stream exists before the sink writes to it (ListShards) and reads the largest record it takes
 * (DescribeStreamSummary's `MaxRecordSizeInKiB`; 1 MiB when the endpoint does not report it, as kinesis-mock, or when
 * the credentials may not describe the stream), once per stream and settings in this JVM every `refreshMs`, so a
 * missing stream fails in a second with a clear message instead of after `kinesis.sink.recordTtl` of retries, and a
 * stream's raised limit is seen within `refreshMs`.
 */
private[sink] final class StreamCheck(clientOf: ClientSettings => KinesisClient, clock: () => Long, refreshMs: Long) {
  import StreamCheck._

  private val log = LoggerFactory.getLogger(getClass)
  private val known = new ConcurrentHashMap[(ClientSettings, String), (Long, Long)]() // (limit, read at)

  /** The largest record `stream` takes, partition key and data, in bytes; fails if it cannot be written to. */
  def maxRecordBytes(client: ClientSettings, stream: String): Long = {
    val now = clock()
    Option(known.get((client, stream))).filter { case (_, readAt) => now - readAt < refreshMs }.fold {
      val limit =
        try readLimit(clientOf(client), stream)
        catch {
          case e: KinesisClientException =>
            throw new KinesisSinkException(s"Cannot write to Kinesis stream '$stream': ${e.getMessage}", e)
        }
      known.put((client, stream), (limit, now))
      limit
    }(_._1)
  }

  private def readLimit(kinesis: KinesisClient, stream: String): Long = {
    kinesis.listShards(stream)
    val kib =
      try SinkClient.of(kinesis).maxRecordSizeInKiB(stream).getOrElse(DefaultMaxRecordKiB)
      catch {
        case e: AccessException =>
          log.warn(s"The sink may not describe Kinesis stream '$stream' (${e.getMessage}); it takes rows of up to " +
            s"$DefaultMaxRecordKiB KiB. Allow kinesis:DescribeStreamSummary on the stream if its limit was raised.")
          DefaultMaxRecordKiB
      }
    kib * 1024L
  }
}

private[sink] object StreamCheck {

  /** A stream's record limit unless raised with UpdateMaxRecordSize, and what endpoints that do not report it take. */
  val DefaultMaxRecordKiB = 1024

  val RefreshMs: Long = 5 * 60 * 1000L

  /** This JVM's checks, through the shared clients. */
  val shared = new StreamCheck(SharedClients, () => System.currentTimeMillis(), RefreshMs)
}
