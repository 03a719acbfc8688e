package io.github.sparkkinesis.options

import io.github.sparkkinesis.client.ClientSettings
import io.github.sparkkinesis.offsets.StartingPosition

/** The source's options, parsed and checked; built once per DataFrame by [[KinesisSourceOptions.parse]]. */
final case class KinesisSourceOptions(
    streamName: String,
    client: ClientSettings,
    startingPosition: StartingPosition,
    failOnDataLoss: Boolean,
    maxFetchRecordsPerShard: Long,
    maxFetchTimePerShardMs: Long,
    describeShardIntervalMs: Long,
    recordsPerFetch: Int,
    fetchIntervalMs: Long,
    idleShardCheckIntervalMs: Long,
    maxRecordsPerTrigger: Option[Long],
    driverRetryTimeoutMs: Long,
    metadataPath: Option[String],
    dropMisroutedRecords: Boolean,
    fanOut: Option[FanOutOptions] = None) {

  override def toString: String =
    s"KinesisSourceOptions(stream=$streamName, region=${client.region.getOrElse("<default chain>")}, " +
      s"endpoint=${client.endpointUrl.getOrElse("<AWS>")}, startingPosition=$startingPosition)"
}

object KinesisSourceOptions {
  import KinesisOptionsRegistry._

  /** Parses Spark's options (any key case); fails on the first bad option with a message that names it. */
  def parse(raw: Map[String, String]): KinesisSourceOptions = {
    val options = new OptionValues(raw)
    import options.{get, getOrDefault}

    options.checkAll(OptionUsage.Source)

    KinesisSourceOptions(
      streamName = get(StreamName).get, // checkAll's rules require it for the source
      client = options.clientSettings,
      startingPosition = getOrDefault(StartingPositionOption),
      failOnDataLoss = getOrDefault(FailOnDataLoss),
      maxFetchRecordsPerShard = getOrDefault(MaxFetchRecordsPerShard),
      maxFetchTimePerShardMs = getOrDefault(MaxFetchTimePerShardSec) * 1000L,
      describeShardIntervalMs = getOrDefault(DescribeShardInterval),
      recordsPerFetch = getOrDefault(NumberOfRecordsPerFetch),
      fetchIntervalMs = getOrDefault(FetchIntervalMs),
      idleShardCheckIntervalMs = getOrDefault(IdleShardCheckInterval),
      maxRecordsPerTrigger = get(MaxRecordsPerTrigger),
      driverRetryTimeoutMs = getOrDefault(DriverRetryTimeout),
      metadataPath = get(MetadataPath),
      dropMisroutedRecords = getOrDefault(DropMisroutedAggregates),
      fanOut = FanOutOptions.parse(options))
  }
}
