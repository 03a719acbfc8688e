package io.github.sparkkinesis.options

import io.github.sparkkinesis.client.UserCredentialsProvider
import io.github.sparkkinesis.offsets.StartingPosition

/**
 * The single source of truth for every option the connector reads: name, type, default, description and
 * check. The README's options table and the Python option builders are generated from, or tested against,
 * [[KinesisOptionsRegistry.all]].
 */
object KinesisOptionsRegistry {
  import OptionUsage._
  import Parsers._

  private val StreamNamePattern = "[a-zA-Z0-9_.-]{1,128}"
  private val StreamArnPattern = "arn:aws[a-z-]*:kinesis:[a-z0-9-]+:[0-9]{12}:stream/[a-zA-Z0-9_.-]{1,128}"

  val StreamName: OptionSpec[String] = OptionSpec[String](
    "kinesis.streamName", "string", None,
    "Name of the Kinesis data stream to read, or a comma-separated list of names to read several streams in one " +
      "query (each row's streamName column says which); or the stream to write to. On a write it overrides the " +
      "streamName column (as the Kafka sink's topic option overrides its topic column): only without this " +
      "option does each row's streamName column name its stream. The source needs this option or " +
      "kinesis.streamARN.",
    "a stream name, 1 to 128 characters of a-z A-Z 0-9 _ . -, or (source) a comma-separated list of them")(
    matches(s"$StreamNamePattern(\\s*,\\s*$StreamNamePattern)*", "it is not a stream name or a comma-separated list of them"))

  val StreamARN: OptionSpec[String] = OptionSpec[String](
    "kinesis.streamARN", "string", None,
    "ARN of a Kinesis data stream to read, or a comma-separated list of ARNs, for instance to read another " +
      "account's stream (with a role that may). Read with kinesis.streamName's streams, if that is set too; each " +
      "row's streamName column holds the stream's name.",
    "an ARN such as arn:aws:kinesis:us-east-1:123456789012:stream/orders, or a comma-separated list of them",
    usage = Source)(matches(s"$StreamArnPattern(\\s*,\\s*$StreamArnPattern)*",
    "it is not a Kinesis stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>) or a comma-separated list of them"))

  val EndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.endpointUrl", "url", None,
    "Kinesis endpoint, for VPC endpoints and local emulators. Default: the regional AWS endpoint.",
    "an http:// or https:// URL such as https://kinesis.us-east-1.amazonaws.com")(url)

  val Region: OptionSpec[String] = OptionSpec[String](
    "kinesis.region", "string", None,
    "AWS region of the stream. Default: taken from an AWS endpoint URL's host, else the SDK's default " +
      "region chain (AWS_REGION, profile, instance metadata).",
    "an AWS region name such as us-east-1")(region)

  /** The values of kinesis.consumerType that ask for enhanced fan-out. */
  val FanOutConsumerTypes: Seq[String] = Seq("SubscribeToShard", "EFO")

  val ConsumerType: OptionSpec[String] = OptionSpec[String](
    "kinesis.consumerType", "enum", Some("GetRecords"),
    "How records are fetched. GetRecords polls each shard (throughput shared with every other polling " +
      "consumer). SubscribeToShard (or EFO) is enhanced fan-out: Kinesis pushes each shard's records to this " +
      "query's own consumer (kinesis.consumerName or kinesis.consumerArn) over HTTP/2, 2 MB/s per shard of its own.",
    "GetRecords, SubscribeToShard or EFO (any case)", usage = Source)(oneOf("GetRecords" +: FanOutConsumerTypes))

  val StartingPositionOption: OptionSpec[StartingPosition] = OptionSpec[StartingPosition](
    "kinesis.startingPosition", "string", Some("LATEST"),
    "Where a new query starts reading (ignored when restarting from a checkpoint). LATEST: records that " +
      "arrive after the query starts. TRIM_HORIZON or EARLIEST: the oldest record still retained, in every " +
      "shard, parents before children. AT_TIMESTAMP <ISO-8601>: records that arrived at or after that " +
      "instant. A JSON map of shard id to {\"iteratorType\": ..., \"iteratorPosition\": ...} with " +
      "AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, AT_TIMESTAMP (epoch millis), TRIM_HORIZON or LATEST; " +
      "shards the map does not name start at TRIM_HORIZON.",
    "LATEST, TRIM_HORIZON, EARLIEST, AT_TIMESTAMP <ISO-8601 instant>, or a JSON map of shard id to position", usage = Source)(
    StartingPosition.parse)

  val FailOnDataLoss: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.failOnDataLoss", "boolean", Some("true"),
    "Whether the query fails when records can no longer be read (a shard expired before it was read to " +
      "its end). false logs a warning and goes on.",
    "true or false", usage = Source)(boolean)

  val MaxFetchRecordsPerShard: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.maxFetchRecordsPerShard", "long", Some("100000"),
    "Most Kinesis records a task reads from one shard in one micro-batch.",
    "a whole number from 1 to 100000000", usage = Source)(long(1L, 100000000L))

  val MaxFetchTimePerShardSec: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.maxFetchTimePerShardSec", "long", Some("10"),
    "Longest time in seconds a task reads from one shard in one micro-batch; a task also ends as soon as " +
      "its shard is caught up with the tip.",
    "a whole number of seconds from 1 to 3600", usage = Source)(long(1L, 3600L))

  val DescribeShardInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.describeShardInterval", "duration", Some("1s"),
    "How often the driver lists the stream's shards to discover resharding.",
    "a duration such as 500ms, 1s or 1m (a bare number is milliseconds), from 0 to 1h", usage = Source)(boundedDuration)

  val NumberOfRecordsPerFetch: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.getRecords.numberOfRecordsPerFetch", "int", Some("10000"),
    "Limit passed to each GetRecords call.",
    "a whole number from 1 to 10000 (the Kinesis maximum)", usage = Source)(int(1, 10000))

  val FetchIntervalMs: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.getRecords.fetchIntervalMs", "long", Some("500"),
    "Least time between two GetRecords calls on one shard: between a task's calls while it drains a backlog, " +
      "and between the end of the batch that read a shard and the next check or read of it. Kinesis allows 5 " +
      "calls per second per shard across all consumers; the default leaves more than half of that to others.",
    "a whole number of milliseconds from 0 to 60000", usage = Source)(long(0L, 60000L))

  val IdleShardCheckInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.idleShardCheckInterval", "duration", Some("1s"),
    "How long the driver waits before checking again a shard whose last check found nothing new: an idle " +
      "shard costs one GetRecords call per this interval. Shorter finds the first record after a quiet spell " +
      "sooner and spends more of the shard's read quota.",
    "a duration such as 500ms, 1s or 1m (a bare number is milliseconds), from 0 to 1h", usage = Source)(boundedDuration)

  val MaxRecordsPerTrigger: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.maxRecordsPerTrigger", "long", None,
    "Most Kinesis records (KPL aggregates count once) one micro-batch reads, split evenly across the shards it " +
      "reads, each at least one (like the Kafka source's maxOffsetsPerTrigger). With Trigger.AvailableNow the run " +
      "takes several batches; Trigger.Once ignores it, as Spark does for every source. Default: no cap.",
    "a whole number from 1 to 9223372036854775807", usage = Source)(long(1L, Long.MaxValue))

  val DriverRetryTimeout: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.driverRetryTimeout", "duration", Some("2m"),
    "How long the driver goes on retrying ListShards and its checks for new records when they fail for a " +
      "passing reason (throttling, connection resets, server errors) before the query fails with the last error. A " +
      "run whose first listing of a stream finds nothing at the endpoint (unknown host, connection refused) fails " +
      "at once instead.",
    "a duration such as 30s or 5m (a bare number is milliseconds), from 0 to 1h", usage = Source)(boundedDuration)

  val ClientNumRetries: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.clientNumRetries", "int", Some("3"),
    "How often the AWS client retries a failed call before the connector sees the failure.",
    "a whole number from 0 to 100")(int(0, 100))

  val ClientRetryIntervalsMs: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.clientRetryIntervalsMs", "long", Some("500"),
    "Base delay of the exponential back-off (with jitter) between retries, and after throttling.",
    "a whole number of milliseconds from 1 to 600000")(long(1L, 600000L))

  val ClientMaxRetryIntervalMs: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.clientMaxRetryIntervalMs", "long", Some("10000"),
    "Longest delay between retries.",
    "a whole number of milliseconds from 1 to 600000")(long(1L, 600000L))

  val MetadataPath: OptionSpec[String] = OptionSpec[String](
    "kinesis.metadataPath", "string", None,
    "Directory (any Hadoop file system with atomic rename, such as HDFS or a local path) where tasks record " +
      "where each micro-batch ended in each shard, with kinesis.metadataCommitterType HDFS. Default: inside the " +
      "query's checkpoint location.",
    "a Hadoop path such as hdfs:///kinesis/metadata or /tmp/metadata", usage = Source)(string)

  val AwsAccessKeyId: OptionSpec[String] = OptionSpec[String](
    "kinesis.awsAccessKeyId", "string", None,
    "AWS access key id; give it with kinesis.awsSecretKey. Default: the SDK's default credentials chain.",
    "an access key id", secret = true)(string)

  val AwsSecretKey: OptionSpec[String] = OptionSpec[String](
    "kinesis.awsSecretKey", "string", None,
    "AWS secret access key; give it with kinesis.awsAccessKeyId.",
    "a secret access key", secret = true)(string)

  val SessionToken: OptionSpec[String] = OptionSpec[String](
    "kinesis.sessionToken", "string", None,
    "AWS session token for temporary credentials; needs kinesis.awsAccessKeyId and kinesis.awsSecretKey.",
    "a session token", secret = true)(string)

  val DropMisroutedAggregates: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.deaggregation.dropMisroutedRecords", "boolean", Some("false"),
    "KCL behaviour: drop a KPL sub-record whose hash key lies outside the shard's hash key range (after a " +
      "reshard the KPL re-sends such records to the right shard). false delivers every sub-record.",
    "true or false", usage = Source)(boolean)

  val VerifyCertificate: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.verifyCertificate", "boolean", Some("true"),
    "Whether TLS certificates of kinesis.endpointUrl are verified. false accepts any certificate and host " +
      "name: only for a local emulator with a self-signed certificate (the sink's KPL speaks HTTPS only).",
    "true or false")(boolean)

  val SinkRecordMaxBufferedTimeMs: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.sink.recordMaxBufferedTimeMs", "long", Some("100"),
    "Longest time a record waits in the producer's buffer to be aggregated and collected with others before " +
      "it is sent (KPL RecordMaxBufferedTime). Longer means fewer, fuller requests and more latency.",
    "a whole number of milliseconds from 1 to 600000", usage = Sink)(long(1L, 600000L))

  val SinkMaxConnections: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.sink.maxConnections", "int", Some("24"),
    "Most connections each executor's producer opens to Kinesis (KPL MaxConnections; 24 is the KPL's default).",
    "a whole number from 1 to 256", usage = Sink)(int(1, 256))

  val SinkAggregationEnabled: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.sink.aggregationEnabled", "boolean", Some("true"),
    "Whether the producer packs several rows into one Kinesis record (KPL aggregation). Readers must " +
      "de-aggregate, as this connector's source, the KCL and the awslabs connector do.",
    "true or false", usage = Sink)(boolean)

  val SinkRecordTtl: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.sink.recordTtl", "long", Some("30000"),
    "Longest time in milliseconds the producer keeps trying to write a row (KPL RecordTtl). A row not " +
      "written by then fails its task, naming the stream and the last error, and Spark retries the task. Values " +
      "above 2147483647 (about 24.8 days) are read as 2147483647: beyond that the KPL expires every record at once.",
    "a whole number of milliseconds from 100 to 9223372036854775807", usage = Sink)(long(100L, Long.MaxValue))

  /** The fixed per-task caps beside the per-executor options below (a task's share should stay smaller). */
  val SinkMaxPendingRecordsPerTask = 50000
  val SinkMaxPendingBytesPerTask: Long = 64L * 1024 * 1024

  val SinkMaxPendingRecordsPerExecutor: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.sink.maxPendingRecordsPerExecutor", "int", Some("100000"),
    "Most rows the write tasks of one executor may have handed to its producer and not yet seen confirmed by " +
      "Kinesis; a task's write waits beyond that, so throttling cannot grow the producer's memory without " +
      s"bound. Each task also holds at most $SinkMaxPendingRecordsPerTask such rows.",
    "a whole number from 1 to 10000000", usage = Sink)(int(1, 10000000))

  val SinkMaxPendingBytesPerExecutor: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.sink.maxPendingBytesPerExecutor", "long", Some("134217728"),
    "Most bytes (partition keys and data) of those rows, 128 MiB by default; the producer's native process " +
      "holds them outside the JVM heap, in the executor's memory overhead: see the README for sizing. Each " +
      s"task also holds at most ${SinkMaxPendingBytesPerTask >> 20} MiB.",
    "a whole number of bytes from 1048576 to 68719476736", usage = Sink)(long(1048576L, 68719476736L))

  val ShardsPerTask: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.shardsPerTask", "int", Some("5"),
    "Most shards one task of a micro-batch reads, in parallel inside the task. A batch has one task per this many " +
      "shards with new records, and at least as many tasks as the cluster has cores (one shard each) while there " +
      "are enough such shards. Fewer tasks cost less per batch with hundreds of shards; more spread the reading.",
    "a whole number from 1 to 100", usage = Source)(int(1, 100))

  val AllowStreamRemoval: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.allowStreamRemoval", "boolean", Some("false"),
    "Whether a query restarted from its checkpoint may read fewer streams than it read before: true forgets the " +
      "streams no longer listed (their positions are lost); false refuses to start, so a typo in the list does " +
      "not silently drop a stream. A stream added to the list is read from kinesis.startingPosition.",
    "true or false", usage = Source)(boolean)

  val EndingPosition: OptionSpec[StartingPosition] = OptionSpec[StartingPosition](
    "kinesis.endingPosition", "string", None,
    "Where a batch read (spark.read) ends; streaming queries refuse it. LATEST: the records that had arrived when " +
      "the read was planned. AT_TIMESTAMP <ISO-8601>: records that arrived before that instant. A JSON map of shard " +
      "id to {\"iteratorType\": ..., \"iteratorPosition\": ...}: AT_SEQUENCE_NUMBER ends before that record, " +
      "AFTER_SEQUENCE_NUMBER with it, AT_TIMESTAMP (epoch millis) before that instant, LATEST as above; shards the " +
      "map does not name end at LATEST. A batch read starts at kinesis.startingPosition, TRIM_HORIZON when unset " +
      "(as Spark's Kafka source starts batch reads at the earliest offsets).",
    "LATEST, AT_TIMESTAMP <ISO-8601 instant>, or a JSON map of shard id to position", usage = Source)(
    StartingPosition.parse)

  val StsRoleArn: OptionSpec[String] = OptionSpec[String](
    "kinesis.stsRoleArn", "string", None,
    "ARN of an IAM role to assume for Kinesis (and the DynamoDB metadata store), with the base credentials: " +
      "kinesis.awsAccessKeyId/awsSecretKey, kinesis.credentialProviderClass, else the default chain. The " +
      "temporary credentials are refreshed before they expire, on the driver and on every executor.",
    "an IAM role ARN such as arn:aws:iam::123456789012:role/kinesis-reader")(
    matches("arn:aws(-[a-z]+)*:iam::[0-9]{12}:role/[a-zA-Z0-9+=,.@_/-]{1,512}", "it is not an IAM role ARN"))

  val StsSessionName: OptionSpec[String] = OptionSpec[String](
    "kinesis.stsSessionName", "string", Some("spark-kinesis"),
    "Session name of the assumed role (it appears in CloudTrail); needs kinesis.stsRoleArn.",
    "2 to 64 characters of a-z A-Z 0-9 and + = , . @ _ -")(
    matches("[a-zA-Z0-9+=,.@_-]{2,64}", "it is not a valid role session name"))

  val StsExternalId: OptionSpec[String] = OptionSpec[String](
    "kinesis.stsExternalId", "string", None,
    "External id passed to AssumeRole, for roles whose trust policy demands one; needs kinesis.stsRoleArn.",
    "2 to 1224 characters of a-z A-Z 0-9 and + = , . @ : / _ -", secret = true)(
    matches("[a-zA-Z0-9+=,.@:/_-]{2,1224}", "it is not a valid external id"))

  val StsEndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.stsEndpointUrl", "url", None,
    "STS endpoint for kinesis.stsRoleArn, for VPC endpoints and local emulators. Default: the regional STS " +
      "endpoint of kinesis.region.",
    "an http:// or https:// URL such as https://sts.us-east-1.amazonaws.com")(url)

  val CredentialProviderClass: OptionSpec[String] = OptionSpec[String](
    "kinesis.credentialProviderClass", "string", None,
    "Class of the base credentials, on the driver's and executors' class path, implementing the AWS SDK for " +
      "Java v2's AwsCredentialsProvider; built with a public constructor taking kinesis.credentialProviderParam " +
      "(a String) when that is set, else with a public no-argument constructor. Instead of " +
      "kinesis.awsAccessKeyId/awsSecretKey.",
    "a fully qualified name of such a class, such as com.example.VaultCredentialsProvider")(
    // Loaded when the DataFrame is created, so a missing class or one of the wrong type fails at once.
    raw => UserCredentialsProvider.loadClass(raw).map(_ => raw))

  val CredentialProviderParam: OptionSpec[String] = OptionSpec[String](
    "kinesis.credentialProviderParam", "string", None,
    "The String handed to the constructor of kinesis.credentialProviderClass; needs that option.",
    "any text", secret = true)(string)

  val MetadataCommitterType: OptionSpec[String] = OptionSpec[String](
    "kinesis.metadataCommitterType", "enum", Some("HDFS"),
    "Where tasks record where each micro-batch ended. HDFS: files under kinesis.metadataPath, on a Hadoop file " +
      "system with an atomic no-overwrite rename (HDFS, a local or mounted disk; object stores such as s3a:// " +
      "and gs:// are refused). DYNAMODB: items in the DynamoDB table kinesis.dynamodb.tableName, for checkpoints " +
      "on S3 and other object stores.",
    "HDFS or DYNAMODB", usage = Source)(oneOf(Seq("HDFS", "DYNAMODB")))

  val DynamoDbTableName: OptionSpec[String] = OptionSpec[String](
    "kinesis.dynamodb.tableName", "string", Some("spark-kinesis-metadata"),
    "DynamoDB table of the DYNAMODB metadata store, in kinesis.region with the Kinesis credentials; created " +
      "(on-demand billing) if missing. Several queries can share it: each keeps its items under its checkpoint " +
      "location.",
    "a table name, 3 to 255 characters of a-z A-Z 0-9 _ . -", usage = Source)(
    matches("[a-zA-Z0-9_.-]{3,255}", "it is not a valid DynamoDB table name"))

  val DynamoDbEndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.dynamodb.endpointUrl", "url", None,
    "DynamoDB endpoint of the DYNAMODB metadata store, for VPC endpoints and DynamoDB Local. Default: the " +
      "regional endpoint of kinesis.region.",
    "an http:// or https:// URL such as https://dynamodb.us-east-1.amazonaws.com", usage = Source)(url)

  val CheckNewRecordThreads: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.checkNewRecordThreads", "int", Some("8"),
    "Driver threads that check idle shards for new records, each check one GetRecords call. One look at the " +
      "shards checks at most 8 per thread (the most overdue first; the first look of a run checks every shard), so " +
      "with thousands of idle shards more threads check each shard more often.",
    "a whole number from 1 to 64", usage = Source)(int(1, 64))

  val ConsumerName: OptionSpec[String] = OptionSpec[String](
    "kinesis.consumerName", "string", None,
    "Enhanced fan-out, managed consumer: the name of the stream consumer this query reads through. It is " +
      "registered if absent (and waited for until ACTIVE) and reused if present. Give each query its own: one " +
      "consumer's subscription to a shard is exclusive.",
    "a consumer name, 1 to 128 characters of a-z A-Z 0-9 _ . -", usage = Source)(
    matches("[a-zA-Z0-9_.-]{1,128}", "it is not a valid consumer name"))

  val ConsumerArn: OptionSpec[String] = OptionSpec[String](
    "kinesis.consumerArn", "string", None,
    "Enhanced fan-out, self-managed consumer: the ARN of an existing stream consumer; the connector never " +
      "registers or deregisters it.",
    "a consumer ARN such as arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000", usage = Source)(
    matches("arn:[a-z0-9-]+:kinesis:[a-z0-9-]+:[0-9]+:stream/[a-zA-Z0-9_.-]+/consumer/[a-zA-Z0-9_.-]+:[0-9]+",
      "it is not a stream consumer ARN"))

  val DeregisterConsumerOnStop: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.deregisterConsumerOnStop", "boolean", Some("true"),
    "Whether a query deregisters the consumer named by kinesis.consumerName when it stops, so it stops costing " +
      "money. Only a consumer this query registered (as its checkpoint records) is deregistered: one that " +
      "existed before the query first started is never touched. false keeps it for the next run.",
    "true or false", usage = Source)(boolean)

  val SubscribeToShardTimeoutSec: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.subscribeToShard.timeoutSec", "long", Some("60"),
    "Enhanced fan-out: longest time a task waits for the next event of a subscription that is not caught up " +
      "before it takes the subscription for dead, cancels it and subscribes again from the last record read.",
    "a whole number of seconds from 1 to 300", usage = Source)(long(1L, 300L))

  val SubscribeToShardMaxRetries: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.subscribeToShard.maxRetries", "int", Some("10"),
    "Enhanced fan-out: how often in a row a task subscribes again after a failed or refused subscription " +
      "(ResourceInUse, LimitExceeded, connection reset, timeout), with jittered back-off, before the task fails.",
    "a whole number from 0 to 100", usage = Source)(int(0, 100))

  /** Every option, in the order the README lists them. */
  val all: Seq[OptionSpec[_]] = Seq(
    StreamName, StreamARN, Region, EndpointUrl, ConsumerType, StartingPositionOption, FailOnDataLoss,
    MaxFetchRecordsPerShard, MaxFetchTimePerShardSec, DescribeShardInterval, NumberOfRecordsPerFetch,
    FetchIntervalMs, IdleShardCheckInterval, MaxRecordsPerTrigger, DriverRetryTimeout, ClientNumRetries, ClientRetryIntervalsMs, ClientMaxRetryIntervalMs, MetadataPath,
    AwsAccessKeyId, AwsSecretKey, SessionToken, DropMisroutedAggregates, VerifyCertificate,
    SinkRecordMaxBufferedTimeMs, SinkMaxConnections, SinkAggregationEnabled, SinkRecordTtl,
    SinkMaxPendingRecordsPerExecutor, SinkMaxPendingBytesPerExecutor, ShardsPerTask, AllowStreamRemoval, EndingPosition, CheckNewRecordThreads,
    StsRoleArn, StsSessionName, StsExternalId, StsEndpointUrl, CredentialProviderClass, CredentialProviderParam,
    MetadataCommitterType, DynamoDbTableName, DynamoDbEndpointUrl,
    ConsumerName, ConsumerArn, DeregisterConsumerOnStop, SubscribeToShardTimeoutSec, SubscribeToShardMaxRetries)

  /** The rules across options, checked in this order after every value ([[OptionRules]]). */
  def rules: Seq[OptionRule] = OptionRules.all

  /**
   * The option names of the awslabs, qubole/roncemer and Databricks connectors accepted as they documented them
   * (see [[OptionAliases]]).
   */
  val aliases: Seq[OptionAlias] = OptionAliases.all

  private val byKey: Map[String, OptionSpec[_]] = all.map(o => o.key -> o).toMap

  def find(name: String): Option[OptionSpec[_]] = byKey.get(name.toLowerCase(java.util.Locale.ROOT))
}
