package io.github.sparkkinesis.options

import java.util.Locale

import io.github.sparkkinesis.client.ClientSettings

/**
 * The sink's options, parsed and checked; built once per write by [[KinesisSinkOptions.parse]].
 *
 * @param stream
 *   option `kinesis.streamName`: every row's stream when set, overriding the `streamName` column; else each row's
 *   `streamName` names its stream
 * @param strictKeyOrder
 *   option `kinesis.sink.strictKeyOrder`: whether each partition key has at most one row in flight
 * @param maxPendingRecordsPerExecutor
 *   most rows an executor's tasks may have handed to the producer unconfirmed
 * @param maxPendingBytesPerExecutor
 *   most bytes of those rows
 * @param putRecords
 *   option `kinesis.sink.producer`: whether rows go out in the connector's own PutRecords calls, not through the KPL
 */
final case class KinesisSinkOptions(
    stream: Option[String],
    client: ClientSettings,
    recordMaxBufferedTimeMs: Long,
    maxConnections: Int,
    aggregationEnabled: Boolean,
    strictKeyOrder: Boolean,
    recordTtlMs: Long,
    maxPendingRecordsPerExecutor: Int,
    maxPendingBytesPerExecutor: Long,
    putRecords: Boolean) {

  override def toString: String =
    s"KinesisSinkOptions(stream=${stream.getOrElse("<per row>")}, " +
      s"region=${client.region.getOrElse("<default chain>")}, " +
      s"endpoint=${PlanRedaction.describeEndpoint(client.endpointUrl)}, " +
      s"producer=${if (putRecords) KinesisOptionsRegistry.SinkProducerPutRecords
        else KinesisOptionsRegistry.SinkProducerKpl}, aggregation=$aggregationEnabled, " +
      s"recordTtlMs=$recordTtlMs)"
}

object KinesisSinkOptions {
  import KinesisOptionsRegistry._

  /** Parses Spark's options (any key case); fails on the first bad option with a message that names it. */
  def parse(raw: Map[String, String]): KinesisSinkOptions = {
    val options = new OptionValues(raw)
    import options.{get, getOrDefault}
    options.checkAll(OptionUsage.Sink)
    val client = options.clientSettings
    val putRecords = getOrDefault(SinkProducer) == SinkProducerPutRecords
    if (putRecords && get(SinkAggregationEnabled).contains(true)) {
      throw new IllegalArgumentException(s"Option ${SinkAggregationEnabled.name} is true, but " +
        s"${SinkProducer.name}=$SinkProducerPutRecords writes one Kinesis record per row: only the KPL aggregates. " +
        s"Remove ${SinkAggregationEnabled.name}, or set ${SinkProducer.name}=$SinkProducerKpl.")
    }
    if (!putRecords) client.endpointUrl.foreach(checkProducerEndpoint)
    get(StreamName).filter(_.contains(",")).foreach { list =>
      throw new IllegalArgumentException(s"Option ${StreamName.name} names several streams ('$list'), but a write " +
        "goes to one: give one stream, or leave the option unset and name each row's stream in its streamName column.")
    }
    KinesisSinkOptions(
      stream = get(StreamName),
      client = client,
      recordMaxBufferedTimeMs = getOrDefault(SinkRecordMaxBufferedTime),
      maxConnections = getOrDefault(SinkMaxConnections),
      aggregationEnabled = !putRecords && getOrDefault(SinkAggregationEnabled),
      strictKeyOrder = getOrDefault(SinkStrictKeyOrder),
      recordTtlMs = getOrDefault(SinkRecordTtl),
      maxPendingRecordsPerExecutor = getOrDefault(SinkMaxPendingRecordsPerExecutor),
      maxPendingBytesPerExecutor = getOrDefault(SinkMaxPendingBytesPerExecutor),
      putRecords = putRecords)
  }

  /** The KPL reaches Kinesis over HTTPS at a host and port, so the endpoint can have neither http:// nor a path. */
  private def checkProducerEndpoint(endpoint: java.net.URI): Unit = {
    if (endpoint.getScheme.toLowerCase(Locale.ROOT) != "https") {
      throw new IllegalArgumentException(
        s"Invalid value '$endpoint' for option ${EndpointUrl.name}: the sink writes through the Kinesis Producer " +
          "Library, which speaks HTTPS only. Use the https:// endpoint (for kinesis-mock or LocalStack, the TLS " +
          s"port, e.g. https://127.0.0.1:4567, with ${VerifyCertificate.name}=false for its self-signed " +
          s"certificate), or set ${SinkProducer.name}=$SinkProducerPutRecords.")
    }
    if (Option(endpoint.getRawPath).exists(p => p.nonEmpty && p != "/") || endpoint.getRawQuery != null) {
      throw new IllegalArgumentException(
        s"Invalid value '$endpoint' for option ${EndpointUrl.name}: the sink's producer takes a host and a port " +
          "only; remove the path and query.")
    }
  }
}
