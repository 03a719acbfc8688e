package io.github.sparkkinesis.options

import java.text.{ParsePosition, SimpleDateFormat}
import java.time.Instant
import java.util.{Locale, TimeZone}

import scala.util.control.NonFatal

import io.github.sparkkinesis.offsets.Json

/** A connector whose users' option spellings this one accepts, and the format name its users write. */
sealed abstract class Dialect(val name: String, val format: String)

object Dialect {
  case object Awslabs extends Dialect("awslabs", "aws-kinesis")
  case object QuboleRoncemer extends Dialect("qubole/roncemer", "kinesis")
  case object Databricks extends Dialect("Databricks", "kinesis")

  /** This connector's own earlier spellings: time options named with their unit before they took durations. */
  case object Earlier extends Dialect("earlier name", "aws-kinesis")

  /** The other connectors, each with its migration section. */
  val all: Seq[Dialect] = Seq(Awslabs, QuboleRoncemer, Databricks)
}

/** What giving an alias does. */
sealed trait AliasEffect

object AliasEffect {

  /**
   * The alias sets option `target`: its value is turned into the target's spelling by `convert` (a Left is why the
   * value is refused); `differs`, when the meaning is not quite ours, is the one-line warning saying what we do.
   */
  final case class Sets(target: String, convert: Conversion = Conversion.Same, differs: Option[String] = None)
      extends AliasEffect

  /** Accepted and ignored; `why` says why it has no effect here. */
  final case class NoEffect(why: String) extends AliasEffect
}

/**
 * How an alias' value becomes its target's: the text in the target's spelling, and a note when the conversion changed
 * what the value means (a rounding), which is warned about.
 */
final case class Conversion(
    accepted: String,
    what: String,
    run: String => Either[String, (String, Option[String])]) {
  def apply(raw: String): Either[String, (String, Option[String])] = run(raw)
}

object Conversion {
  val Same: Conversion = Conversion("", "", raw => Right((raw, None)))

  /** Milliseconds to whole seconds, rounded up (at least 1). */
  val MillisToSeconds: Conversion = Conversion(
    "a whole number of milliseconds",
    "milliseconds to seconds, rounded up",
    raw =>
      Parsers.long(0L, Long.MaxValue)(raw).map(secondsOf))

  /** A duration (`10s`, `2m`, `500ms`; a bare number is milliseconds) to whole seconds, rounded up (at least 1). */
  val DurationToSeconds: Conversion = Conversion(
    "a duration such as 10s or 2m",
    "a duration to seconds, rounded up",
    raw =>
      Parsers.boundedDuration(raw).map(secondsOf))

  /** A duration to a whole number of milliseconds. */
  val DurationToMillis: Conversion = Conversion(
    "a duration such as 400ms or 1s",
    "a duration to milliseconds",
    raw =>
      Parsers.boundedDuration(raw).map(ms => (ms.toString, None)))

  private def secondsOf(ms: Long): (String, Option[String]) = {
    val seconds = math.max(1L, (ms + 999L) / 1000L)
    (seconds.toString, Some(s"read as $seconds s").filter(_ => seconds * 1000L != ms))
  }

  /** Databricks' `endpoint` may be a bare host name; the AWS SDK needs a URL. */
  val HostToUrl: Conversion = Conversion(
    "a URL or a host name",
    "a bare host name gets https://",
    raw =>
      Right((if (raw.contains("://")) raw else s"https://$raw", None)))

  /** Databricks' consumerMode: polling or efo. */
  val ConsumerMode: Conversion = Conversion(
    "polling or efo",
    "polling is GetRecords, efo is SubscribeToShard",
    raw =>
      raw.toLowerCase(Locale.ROOT) match {
        case "polling" => Right(("GetRecords", None))
        case "efo" => Right(("SubscribeToShard", None))
        case _ => Left("it is not polling or efo")
      })

  /**
   * Databricks' initialPosition: latest, trim_horizon, earliest, or at_timestamp as the JSON `{"at_timestamp":
   * "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}` (`format` a java.text.SimpleDateFormat pattern;
   * without it the time is ISO-8601).
   */
  val DatabricksPosition: Conversion = Conversion(
    "latest, trim_horizon, earliest, or {\"at_timestamp\": \"<time>\", \"format\": \"<SimpleDateFormat pattern>\"}",
    "at_timestamp JSON to AT_TIMESTAMP and its instant",
    raw =>
      raw.toLowerCase(Locale.ROOT) match {
        case "latest" | "trim_horizon" | "earliest" => Right((raw.toUpperCase(Locale.ROOT), None))
        case _ if raw.startsWith("{") =>
          atTimestamp(raw).map(ms => (s"AT_TIMESTAMP ${Instant.ofEpochMilli(ms)}", None))
        case _ => Left("it is not latest, trim_horizon, earliest or an at_timestamp JSON object")
      })

  private def atTimestamp(json: String): Either[String, Long] =
    try {
      val node = Json.read(json, "initialPosition")
      val time = Option(node.get("at_timestamp")).map(_.asText)
        .toRight("the JSON has no \"at_timestamp\" field")
      time.flatMap { text =>
        Option(node.get("format")).map(_.asText) match {
          case None => scala.util.Try(Instant.parse(text).toEpochMilli).toOption
              .toRight(s"'$text' is not an ISO-8601 instant; give its format too")
          case Some(pattern) =>
            val format = new SimpleDateFormat(pattern, Locale.ROOT)
            format.setLenient(false)
            format.setTimeZone(TimeZone.getTimeZone("UTC"))
            val position = new ParsePosition(0)
            Option(format.parse(text, position)).filter(_ => position.getIndex == text.length).map(_.getTime)
              .toRight(s"'$text' does not match the format '$pattern'")
        }
      }
    } catch {
      case NonFatal(e) => Left(s"it is not JSON (${e.getMessage})")
    }
}

/**
 * One option name another connector documents, accepted here (case-insensitively) with the meaning that connector gives
 * it.
 */
final case class OptionAlias(name: String, dialects: Seq[Dialect], effect: AliasEffect) {
  def key: String = name.toLowerCase(Locale.ROOT)

  /** The connectors that document it: `qubole/roncemer, Databricks`. */
  def dialectNames: String = dialects.map(_.name).mkString(", ")

  /** How messages name the alias: `startingPosition (qubole/roncemer)`. */
  def shown: String = s"$name ($dialectNames)"
}

/**
 * The option names of the awslabs, qubole/roncemer and Databricks connectors, as the options registry owns them
 * ([[KinesisOptionsRegistry.aliases]]). Add new entries at the end of the lists.
 */
object OptionAliases {
  import AliasEffect._
  import Conversion._
  import Dialect._

  private val FlushNoEffect = NoEffect("a write task waits until Kinesis has confirmed each of its rows (at most " +
    "kinesis.sink.recordTtl), not for a fixed flush time")
  private val MetadataRetriesNoEffect = NoEffect("shard ends are recorded through the Hadoop file system, whose " +
    "client retries by its own settings, or in DynamoDB with the retries of kinesis.clientNumRetries")

  val awslabs: Seq[OptionAlias] = Seq(
    OptionAlias("kinesis.kinesisRegion", Seq(Awslabs), Sets("kinesis.region")),
    OptionAlias(
      "kinesis.minBatchesToRetain",
      Seq(Awslabs),
      NoEffect(
        "the source keeps the shard ends of its last 10 micro-batches, a few bytes per shard")),
    OptionAlias("kinesis.metadataNumRetries", Seq(Awslabs), MetadataRetriesNoEffect),
    OptionAlias("kinesis.metadataRetryIntervalsMs", Seq(Awslabs), MetadataRetriesNoEffect),
    OptionAlias("kinesis.metadataMaxRetryIntervalMs", Seq(Awslabs), MetadataRetriesNoEffect),
    OptionAlias("kinesis.sink.flushWaitTimeMs", Seq(Awslabs), FlushNoEffect))

  val quboleRoncemer: Seq[OptionAlias] = Seq(
    OptionAlias("streamName", Seq(QuboleRoncemer, Databricks), Sets("kinesis.streamName")),
    OptionAlias("endpointUrl", Seq(QuboleRoncemer), Sets("kinesis.endpointUrl")),
    OptionAlias("awsAccessKeyId", Seq(QuboleRoncemer), Sets("kinesis.awsAccessKeyId")),
    OptionAlias("awsSecretKey", Seq(QuboleRoncemer, Databricks), Sets("kinesis.awsSecretKey")),
    OptionAlias("awsSTSRoleARN", Seq(QuboleRoncemer), Sets("kinesis.stsRoleArn")),
    OptionAlias("awsSTSSessionName", Seq(QuboleRoncemer), Sets("kinesis.stsSessionName")),
    OptionAlias(
      "awsUseInstanceProfile",
      Seq(QuboleRoncemer),
      NoEffect(
        "without credentials in the options the connector uses the AWS SDK's default chain, which ends with the " +
          "instance profile")),
    OptionAlias("startingPosition", Seq(QuboleRoncemer), Sets("kinesis.startingPosition")),
    OptionAlias("failOnDataLoss", Seq(QuboleRoncemer), Sets("kinesis.failOnDataLoss")),
    OptionAlias(
      "kinesis.executor.maxFetchTimeInMs",
      Seq(QuboleRoncemer),
      Sets("kinesis.maxFetchTimePerShard", MillisToSeconds)),
    OptionAlias(
      "kinesis.executor.maxFetchRecordsPerShard",
      Seq(QuboleRoncemer),
      Sets("kinesis.maxFetchRecordsPerShard")),
    OptionAlias(
      "kinesis.executor.maxRecordPerRead",
      Seq(QuboleRoncemer),
      Sets("kinesis.getRecords.numberOfRecordsPerFetch")),
    OptionAlias(
      "kinesis.executor.addIdleTimeBetweenReads",
      Seq(QuboleRoncemer),
      NoEffect(
        "the source always waits kinesis.getRecords.fetchInterval between two GetRecords calls on a shard")),
    OptionAlias(
      "kinesis.executor.idleTimeBetweenReadsInMs",
      Seq(QuboleRoncemer),
      Sets("kinesis.getRecords.fetchInterval")),
    OptionAlias("kinesis.client.describeShardInterval", Seq(QuboleRoncemer), Sets("kinesis.describeShardInterval")),
    OptionAlias("kinesis.client.numRetries", Seq(QuboleRoncemer), Sets("kinesis.clientNumRetries")),
    OptionAlias("kinesis.client.retryIntervalMs", Seq(QuboleRoncemer), Sets("kinesis.clientRetryInterval")),
    OptionAlias("kinesis.client.maxRetryIntervalMs", Seq(QuboleRoncemer), Sets("kinesis.clientMaxRetryInterval")),
    OptionAlias(
      "kinesis.client.avoidEmptyBatches",
      Seq(QuboleRoncemer),
      NoEffect(
        "the source always checks for unread records before it plans a micro-batch, and plans none without them")),
    OptionAlias(
      "kinesis.executor.recordMaxBufferedTime",
      Seq(QuboleRoncemer),
      Sets("kinesis.sink.recordMaxBufferedTime")),
    OptionAlias("kinesis.executor.maxConnections", Seq(QuboleRoncemer), Sets("kinesis.sink.maxConnections")),
    OptionAlias("kinesis.executor.aggregationEnabled", Seq(QuboleRoncemer), Sets("kinesis.sink.aggregationEnabled")),
    OptionAlias("kinesis.executor.flushWaitTimeMillis", Seq(QuboleRoncemer), FlushNoEffect))

  val databricks: Seq[OptionAlias] = Seq(
    OptionAlias("streamARN", Seq(Databricks), Sets("kinesis.streamARN")),
    OptionAlias("region", Seq(Databricks), Sets("kinesis.region")),
    OptionAlias("endpoint", Seq(Databricks), Sets("kinesis.endpointUrl", HostToUrl)),
    OptionAlias("initialPosition", Seq(Databricks), Sets("kinesis.startingPosition", DatabricksPosition)),
    OptionAlias("maxRecordsPerFetch", Seq(Databricks), Sets("kinesis.getRecords.numberOfRecordsPerFetch")),
    OptionAlias(
      "maxFetchRate",
      Seq(Databricks),
      NoEffect(
        "the source paces each shard by kinesis.getRecords.fetchInterval between GetRecords calls, not by MB/s")),
    OptionAlias("minFetchPeriod", Seq(Databricks), Sets("kinesis.getRecords.fetchInterval", DurationToMillis)),
    OptionAlias(
      "maxFetchDuration",
      Seq(Databricks),
      Sets(
        "kinesis.maxFetchTimePerShard",
        DurationToSeconds,
        differs = Some("the source does not prefetch between micro-batches; this is how long a task reads one shard " +
          "in a micro-batch"))),
    OptionAlias(
      "fetchBufferSize",
      Seq(Databricks),
      NoEffect(
        "the source does not prefetch between micro-batches; kinesis.maxRecordsPerTrigger caps a micro-batch instead")),
    OptionAlias("shardsPerTask", Seq(Databricks), Sets("kinesis.shardsPerTask")),
    OptionAlias("shardFetchInterval", Seq(Databricks), Sets("kinesis.describeShardInterval")),
    OptionAlias("consumerMode", Seq(Databricks), Sets("kinesis.consumerType", ConsumerMode)),
    OptionAlias("consumerName", Seq(Databricks), Sets("kinesis.consumerName")),
    OptionAlias("requireConsumerDeregistration", Seq(Databricks), Sets("kinesis.deregisterConsumerOnStop")),
    OptionAlias("awsAccessKey", Seq(Databricks), Sets("kinesis.awsAccessKeyId")),
    OptionAlias("roleArn", Seq(Databricks), Sets("kinesis.stsRoleArn")),
    OptionAlias("roleExternalId", Seq(Databricks), Sets("kinesis.stsExternalId")),
    OptionAlias("roleSessionName", Seq(Databricks), Sets("kinesis.stsSessionName")),
    OptionAlias("stsEndpoint", Seq(Databricks), Sets("kinesis.stsEndpointUrl")))

  /** The names time options had before they took durations; a bare number still counts in the old unit. */
  val earlier: Seq[OptionAlias] = Seq(
    "kinesis.maxFetchTimePerShardSec" -> "kinesis.maxFetchTimePerShard",
    "kinesis.getRecords.fetchIntervalMs" -> "kinesis.getRecords.fetchInterval",
    "kinesis.clientRetryIntervalsMs" -> "kinesis.clientRetryInterval",
    "kinesis.clientMaxRetryIntervalMs" -> "kinesis.clientMaxRetryInterval",
    "kinesis.sink.recordMaxBufferedTimeMs" -> "kinesis.sink.recordMaxBufferedTime",
    "kinesis.subscribeToShard.timeoutSec" -> "kinesis.subscribeToShard.timeout").map { case (old, target) =>
    OptionAlias(old, Seq(Earlier), Sets(target))
  }

  /** Every alias; names shared by two connectors with one meaning are listed once, under both. */
  val all: Seq[OptionAlias] = awslabs ++ quboleRoncemer ++ databricks ++ earlier
}
