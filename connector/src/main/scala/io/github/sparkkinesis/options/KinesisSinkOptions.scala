package io.github.sparkkinesis.options

import java.util.Locale

import io.github.sparkkinesis.client.ClientSettings

/**
 * The sink's options, parsed and checked; built once per write by [[KinesisSinkOptions.parse]].
 *
 * @param defaultStream the stream for rows without a `streamName` value (option `kinesis.streamName`)
 */
final case class KinesisSinkOptions(
    defaultStream: Option[String],
    client: ClientSettings,
    flushWaitTimeMs: Long,
    recordMaxBufferedTimeMs: Long,
    maxConnections: Int,
    aggregationEnabled: Boolean,
    recordTtlMs: Long) {

  override def toString: String =
    s"KinesisSinkOptions(stream=${defaultStream.getOrElse("<per row>")}, " +
      s"region=${client.region.getOrElse("<default chain>")}, endpoint=${client.endpointUrl.getOrElse("<AWS>")}, " +
      s"aggregation=$aggregationEnabled, recordTtlMs=$recordTtlMs)"
}

object KinesisSinkOptions {
  import KinesisOptionsRegistry._

  /** Parses Spark's options (any key case); fails on the first bad option with a message that names it. */
  def parse(raw: Map[String, String]): KinesisSinkOptions = {
    val options = new OptionValues(raw)
    import options.{get, getOrDefault}
    options.checkAll(OptionUsage.Sink)
    val client = options.clientSettings
    client.endpointUrl.foreach(checkProducerEndpoint)
    KinesisSinkOptions(
      defaultStream = get(StreamName),
      client = client,
      flushWaitTimeMs = getOrDefault(SinkFlushWaitTimeMs),
      recordMaxBufferedTimeMs = getOrDefault(SinkRecordMaxBufferedTimeMs),
      maxConnections = getOrDefault(SinkMaxConnections),
      aggregationEnabled = getOrDefault(SinkAggregationEnabled),
      recordTtlMs = getOrDefault(SinkRecordTtl))
  }

  /** The KPL reaches Kinesis over HTTPS at a host and port, so the endpoint can have neither http:// nor a path. */
  private def checkProducerEndpoint(endpoint: java.net.URI): Unit = {
    if (endpoint.getScheme.toLowerCase(Locale.ROOT) != "https") {
      throw new IllegalArgumentException(
        s"Invalid value '$endpoint' for option ${EndpointUrl.name}: the sink writes through the Kinesis Producer " +
          "Library, which speaks HTTPS only. Use the https:// endpoint (for kinesis-mock or LocalStack, the TLS " +
          s"port, e.g. https://127.0.0.1:4567, with ${VerifyCertificate.name}=false for its self-signed certificate).")
    }
    if (Option(endpoint.getRawPath).exists(p => p.nonEmpty && p != "/") || endpoint.getRawQuery != null) {
      throw new IllegalArgumentException(
        s"Invalid value '$endpoint' for option ${EndpointUrl.name}: the sink's producer takes a host and a port " +
          "only; remove the path and query.")
    }
  }
}
