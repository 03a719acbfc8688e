package io.github.sparkkinesis.options

import java.net.URI

/**
 * Where and how the driver publishes the consumer lag to CloudWatch (`kinesis.emitConsumerLagMetrics`): the namespace,
 * the dimensions (values may hold the placeholders of `kinesis.cloudwatch.dimensions`), and the endpoint and region
 * (None: the regional endpoint, and the stream's region).
 */
final case class CloudWatchSettings(
    namespace: String,
    dimensions: Seq[(String, String)],
    endpoint: Option[URI],
    region: Option[String])

object CloudWatchSettings {
  import KinesisOptionsRegistry._

  /** What a dimension's value may hold: the stream's name, the Spark application's name, the query's id. */
  val Placeholders: Seq[String] = Seq("{stream}", "{app}", "{queryId}")

  /** The settings when `kinesis.emitConsumerLagMetrics` is true, else None. */
  private[options] def parse(options: OptionValues): Option[CloudWatchSettings] =
    if (!options.getOrDefault(EmitConsumerLagMetrics)) None
    else Some(CloudWatchSettings(
      options.getOrDefault(CloudWatchNamespace),
      options.getOrDefault(CloudWatchDimensions),
      options.get(CloudWatchEndpointUrl),
      options.get(CloudWatchRegion)))
}
