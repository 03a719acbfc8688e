package io.github.sparkkinesis.options

import java.util.Locale

import io.github.sparkkinesis.client.{AwsCredentials, ClientSettings, RetrySettings}
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
    metadataPath: Option[String],
    dropMisroutedRecords: Boolean) {

  override def toString: String =
    s"KinesisSourceOptions(stream=$streamName, region=${client.region.getOrElse("<default chain>")}, " +
      s"endpoint=${client.endpointUrl.getOrElse("<AWS>")}, startingPosition=$startingPosition)"
}

object KinesisSourceOptions {
  import KinesisOptionsRegistry._

  /** Parses Spark's options (any key case); fails on the first bad option with a message that names it. */
  def parse(raw: Map[String, String]): KinesisSourceOptions = {
    val options = raw.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    rejectUnknown(options.keys)

    def get[T](spec: OptionSpec[T]): Option[T] = options.get(spec.key).map(spec.parseOrFail)
    def getOrDefault[T](spec: OptionSpec[T]): T =
      get(spec).getOrElse(spec.parseOrFail(spec.default.getOrElse(
        throw new IllegalStateException(s"option ${spec.name} has no default"))))

    val streamName = get(StreamName).getOrElse(throw new IllegalArgumentException(
      s"Option ${StreamName.name} is required: set it to the name of the Kinesis stream to read, " +
        "for example .option(\"" + StreamName.name + "\", \"my-stream\")."))
    getOrDefault(ConsumerType)
    val endpoint = get(EndpointUrl)
    val region = get(Region).orElse(endpoint.flatMap(regionOfAwsEndpoint))
    val (numRetries, baseDelayMs, maxDelayMs) =
      (getOrDefault(ClientNumRetries), getOrDefault(ClientRetryIntervalsMs), getOrDefault(ClientMaxRetryIntervalMs))
    // Checked before RetrySettings is built: its own check would fail first, in words that name no option.
    if (maxDelayMs < baseDelayMs) {
      throw new IllegalArgumentException(
        s"Option ${ClientMaxRetryIntervalMs.name} ($maxDelayMs) is smaller than " +
          s"${ClientRetryIntervalsMs.name} ($baseDelayMs): make the maximum at least the base interval.")
    }
    val retry = RetrySettings(numRetries, baseDelayMs, maxDelayMs)

    KinesisSourceOptions(
      streamName = streamName,
      client = ClientSettings(region, endpoint, credentials(get(AwsAccessKeyId), get(AwsSecretKey), get(SessionToken)),
        retry),
      startingPosition = getOrDefault(StartingPositionOption),
      failOnDataLoss = getOrDefault(FailOnDataLoss),
      maxFetchRecordsPerShard = getOrDefault(MaxFetchRecordsPerShard),
      maxFetchTimePerShardMs = getOrDefault(MaxFetchTimePerShardSec) * 1000L,
      describeShardIntervalMs = getOrDefault(DescribeShardInterval),
      recordsPerFetch = getOrDefault(NumberOfRecordsPerFetch),
      fetchIntervalMs = getOrDefault(FetchIntervalMs),
      metadataPath = get(MetadataPath),
      dropMisroutedRecords = getOrDefault(DropMisroutedAggregates))
  }

  private val AwsEndpointHost =
    """(?:^|.*\.)kinesis(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?""".r

  /** The region named by an AWS endpoint's host, such as us-west-2 for https://kinesis.us-west-2.amazonaws.com. */
  def regionOfAwsEndpoint(endpoint: java.net.URI): Option[String] =
    Option(endpoint.getHost).map(_.toLowerCase(Locale.ROOT)).collect { case AwsEndpointHost(region) => region }

  private def credentials(
      accessKeyId: Option[String], secretKey: Option[String], token: Option[String]): Option[AwsCredentials] =
    (accessKeyId, secretKey) match {
      case (Some(id), Some(secret)) => Some(AwsCredentials(id, secret, token))
      case (None, None) if token.isEmpty => None
      case (None, None) => throw new IllegalArgumentException(
        s"Option ${SessionToken.name} is set without ${AwsAccessKeyId.name} and ${AwsSecretKey.name}: " +
          "give all three for temporary credentials, or none to use the default credentials chain.")
      case _ => throw new IllegalArgumentException(
        s"Options ${AwsAccessKeyId.name} and ${AwsSecretKey.name} go together: set both, or neither to use " +
          "the default credentials chain (environment, profile, instance or container role).")
    }

  /** Fails on a `kinesis.*` option the registry does not know, naming the closest known one. */
  private def rejectUnknown(keys: Iterable[String]): Unit =
    keys.filter(_.startsWith("kinesis.")).find(k => find(k).isEmpty).foreach { unknown =>
      val closest = all.minBy(o => editDistance(o.key, unknown))
      throw new IllegalArgumentException(
        s"Unknown option '$unknown'. Did you mean ${closest.name}? The accepted options are listed in the " +
          "README's options table.")
    }

  private def editDistance(a: String, b: String): Int = {
    val row = Array.tabulate(b.length + 1)(identity)
    for (i <- 1 to a.length) {
      var diagonal = row(0)
      row(0) = i
      for (j <- 1 to b.length) {
        val above = row(j)
        row(j) = math.min(math.min(row(j) + 1, row(j - 1) + 1), diagonal + (if (a(i - 1) == b(j - 1)) 0 else 1))
        diagonal = above
      }
    }
    row(b.length)
  }
}
