package io.github.sparkkinesis.options

import io.github.sparkkinesis.client.{ClientSettings, StreamRef}
import io.github.sparkkinesis.offsets.StartingPosition

/**
 * The source's options, parsed and checked; built once per DataFrame by [[KinesisSourceOptions.parse]].
 *
 * @param streams
 *   the streams to read, by name or ARN, as given (in `kinesis.streamName`, then `kinesis.streamARN`)
 * @param batchStartingPosition
 *   where a batch read starts: `kinesis.startingPosition`, TRIM_HORIZON when unset
 * @param endingPosition
 *   where a batch read ends (`kinesis.endingPosition`)
 */
final case class KinesisSourceOptions(
    streams: Seq[String],
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
    shardsPerTask: Int = 5,
    allowStreamRemoval: Boolean = false,
    batchStartingPosition: StartingPosition = StartingPosition.TrimHorizon,
    endingPosition: Option[StartingPosition] = None,
    checkNewRecordThreads: Int = 8,
    metadataStore: MetadataStoreSettings = MetadataStoreSettings.Hdfs,
    fanOut: Option[FanOutOptions] = None,
    realTimePollIntervalMs: Long = 200L,
    realTimeMaxTasks: Option[Int] = None,
    cloudWatch: Option[CloudWatchSettings] = None,
    maxBytesPerTrigger: Option[Long] = None,
    maxBytesPerSecondPerShard: Option[Long] = None) {

  override def toString: String =
    s"KinesisSourceOptions(streams=${streams.mkString(",")}, region=${client.region.getOrElse("<default chain>")}, " +
      s"endpoint=${PlanRedaction.describeEndpoint(client.endpointUrl)}, startingPosition=$startingPosition)"
}

/** Which store keeps the ends of micro-batches (`kinesis.metadataCommitterType`), with its settings. */
sealed trait MetadataStoreSettings extends Serializable

object MetadataStoreSettings {

  /** Files under `kinesis.metadataPath` (default: inside the checkpoint). */
  case object Hdfs extends MetadataStoreSettings

  /** Items of DynamoDB table `tableName`, at `endpoint` (None: the region's). */
  final case class DynamoDb(tableName: String, endpoint: Option[java.net.URI]) extends MetadataStoreSettings

  private[options] def parse(options: OptionValues): MetadataStoreSettings = {
    import KinesisOptionsRegistry._
    options.getOrDefault(MetadataCommitterType).toUpperCase(java.util.Locale.ROOT) match {
      case "DYNAMODB" => DynamoDb(options.getOrDefault(DynamoDbTableName), options.get(DynamoDbEndpointUrl))
      case _ => Hdfs
    }
  }
}

object KinesisSourceOptions {
  import KinesisOptionsRegistry._

  /** Parses Spark's options (any key case); fails on the first bad option with a message that names it. */
  def parse(raw: Map[String, String]): KinesisSourceOptions = {
    val options = new OptionValues(raw)
    import options.{get, getOrDefault}

    options.checkAll(OptionUsage.Source)

    // checkAll's rules require one of the two for the source
    val streams = (get(StreamName).toSeq ++ get(StreamARN).toSeq).flatMap(_.split(",").map(_.trim))
    // Rows and metrics name a stream by its name, so two entries with one name (a stream given by name and by
    // ARN, or two accounts' streams) could not be told apart.
    val repeated = streams.groupBy(StreamRef.nameOf).collect { case (name, given) if given.size > 1 => name -> given }
    if (repeated.nonEmpty) {
      throw new IllegalArgumentException(repeated.toSeq.sortBy(_._1).map { case (name, given) =>
        s"stream name $name is given ${given.size} times (${given.mkString(", ")})"
      }.mkString(
        "Options " + StreamName.name + " and " + StreamARN.name + " must name each stream once: ",
        "; ",
        ". Rows and metrics tell streams apart by name; read same-named streams of other accounts in separate " +
          "queries."))
    }
    val start = getOrDefault(StartingPositionOption)
    if (streams.size > 1 && start.isInstanceOf[StartingPosition.PerShard]) {
      throw new IllegalArgumentException(s"Option ${StartingPositionOption.name} names shards, but the query reads " +
        s"${streams.size} streams (${streams.mkString(", ")}) whose shard ids overlap: give a position that applies " +
        "to every stream (LATEST, TRIM_HORIZON, AT_TIMESTAMP), or read the streams in separate queries.")
    }
    val client = options.clientSettings
    KinesisSourceOptions(
      streams = streams,
      client = client,
      startingPosition = start,
      failOnDataLoss = getOrDefault(FailOnDataLoss),
      maxFetchRecordsPerShard = getOrDefault(MaxFetchRecordsPerShard),
      maxFetchTimePerShardMs = getOrDefault(MaxFetchTimePerShard),
      describeShardIntervalMs = getOrDefault(DescribeShardInterval),
      recordsPerFetch = getOrDefault(NumberOfRecordsPerFetch),
      fetchIntervalMs = getOrDefault(FetchInterval),
      idleShardCheckIntervalMs = getOrDefault(IdleShardCheckInterval),
      maxRecordsPerTrigger = get(MaxRecordsPerTrigger),
      driverRetryTimeoutMs = getOrDefault(DriverRetryTimeout),
      metadataPath = get(MetadataPath),
      dropMisroutedRecords = getOrDefault(DropMisroutedAggregates),
      shardsPerTask = getOrDefault(ShardsPerTask),
      allowStreamRemoval = getOrDefault(AllowStreamRemoval),
      batchStartingPosition = get(StartingPositionOption).getOrElse(StartingPosition.TrimHorizon),
      endingPosition = get(EndingPosition),
      checkNewRecordThreads = getOrDefault(CheckNewRecordThreads),
      metadataStore = MetadataStoreSettings.parse(options),
      fanOut = FanOutOptions.parse(options, streams, client.region),
      realTimePollIntervalMs = getOrDefault(RealTimePollInterval),
      realTimeMaxTasks = get(RealTimeMaxTasks),
      cloudWatch = CloudWatchSettings.parse(options),
      maxBytesPerTrigger = get(MaxBytesPerTrigger),
      maxBytesPerSecondPerShard = get(MaxBytesPerSecondPerShard))
  }
}
