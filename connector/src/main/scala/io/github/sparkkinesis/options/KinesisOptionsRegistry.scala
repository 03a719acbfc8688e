package io.github.sparkkinesis.options

import io.github.sparkkinesis.client.UserCredentialsProvider
import io.github.sparkkinesis.offsets.StartingPosition

/**
 * The single source of truth for every option the connector reads: name, typed default, description and parser (which
 * names the type and the accepted values). Time options are durations such as `500ms` or `5m`. The options table of
 * docs/options.md and the Python option builders are generated from, or tested against, [[KinesisOptionsRegistry.all]].
 */
object KinesisOptionsRegistry {
  import OptionUsage._
  import Parsers._

  private val StreamNamePattern = "[a-zA-Z0-9_.-]{1,128}"
  private val StreamArnPattern = "arn:aws[a-z-]*:kinesis:[a-z0-9-]+:[0-9]{12}:stream/[a-zA-Z0-9_.-]{1,128}"

  val StreamName: OptionSpec[String] = OptionSpec[String](
    "kinesis.streamName",
    None,
    "Name of the Kinesis data stream to read, or a comma-separated list of names to read several streams in one " +
      "query (each row's streamName column says which); or the stream to write to. On a write it overrides the " +
      "streamName column (as the Kafka sink's topic option overrides its topic column): only without this " +
      "option does each row's streamName column name its stream. The source needs this option or " +
      "kinesis.streamARN.",
    matches(
      s"$StreamNamePattern(\\s*,\\s*$StreamNamePattern)*",
      "a stream name, 1 to 128 characters of a-z A-Z 0-9 _ . -, or (source) a comma-separated list of them",
      "it is not a stream name or a comma-separated list of them"))

  val StreamARN: OptionSpec[String] = OptionSpec[String](
    "kinesis.streamARN",
    None,
    "ARN of a Kinesis data stream to read, or a comma-separated list of ARNs, for instance to read another " +
      "account's stream (with a role that may). Read with kinesis.streamName's streams, if that is set too; each " +
      "row's streamName column holds the stream's name.",
    matches(
      s"$StreamArnPattern(\\s*,\\s*$StreamArnPattern)*",
      "an ARN such as arn:aws:kinesis:us-east-1:123456789012:stream/orders, or a comma-separated list of them",
      "it is not a Kinesis stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>) or a comma-separated list " +
        "of " +
        "them"),
    usage = Source)

  val EndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.endpointUrl",
    None,
    "Kinesis endpoint, for VPC endpoints and local emulators. Default: the regional AWS endpoint.",
    url("https://kinesis.us-east-1.amazonaws.com"))

  val Region: OptionSpec[String] = OptionSpec[String](
    "kinesis.region",
    None,
    "AWS region of the stream. Default: taken from an AWS endpoint URL's host, else the SDK's default " +
      "region chain (AWS_REGION, profile, instance metadata).",
    region)

  /** The values of kinesis.consumerType that ask for enhanced fan-out. */
  val FanOutConsumerTypes: Seq[String] = Seq("SubscribeToShard", "EFO")

  val ConsumerType: OptionSpec[String] = OptionSpec[String](
    "kinesis.consumerType",
    Some("GetRecords"),
    "How records are fetched. GetRecords polls each shard (throughput shared with every other polling " +
      "consumer). SubscribeToShard (or EFO) is enhanced fan-out: Kinesis pushes each shard's records to this " +
      "query's own consumer (kinesis.consumerName or kinesis.consumerArn) over HTTP/2, 2 MB/s per shard of its own.",
    oneOf("GetRecords" +: FanOutConsumerTypes),
    usage = Source)

  val StartingPositionOption: OptionSpec[StartingPosition] = OptionSpec[StartingPosition](
    "kinesis.startingPosition",
    Some(StartingPosition.Latest),
    "Where a new query starts reading (ignored when restarting from a checkpoint). LATEST: records that " +
      "arrive after the query starts. TRIM_HORIZON or EARLIEST: the oldest record still retained, in every " +
      "shard, parents before children. AT_TIMESTAMP <ISO-8601>: records that arrived at or after that " +
      "instant. A JSON map of shard id to {\"iteratorType\": ..., \"iteratorPosition\": ...} with " +
      "AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, AT_TIMESTAMP (epoch millis), TRIM_HORIZON or LATEST; " +
      "shards the map does not name start at TRIM_HORIZON.",
    position("LATEST, TRIM_HORIZON, EARLIEST, AT_TIMESTAMP <ISO-8601 instant>, or a JSON map of shard id to position"),
    usage = Source)

  val FailOnDataLoss: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.failOnDataLoss",
    Some(true),
    "Whether the query fails when records can no longer be read (a shard expired before it was read to " +
      "its end). false logs a warning and goes on.",
    boolean,
    usage = Source)

  val MaxFetchRecordsPerShard: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.maxFetchRecordsPerShard",
    Some(100000L),
    "Most Kinesis records a task reads from one shard in one micro-batch.",
    long(1L, 100000000L),
    usage = Source)

  val MaxFetchTimePerShard: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.maxFetchTimePerShard",
    Some(10000L),
    "Longest time a task reads from one shard in one micro-batch; a task also ends as soon as its shard is " +
      "caught up with the tip.",
    duration(1000L, 3600000L, bareUnit = "s"),
    usage = Source)

  val DescribeShardInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.describeShardInterval",
    Some(1000L),
    "How often the driver lists the stream's shards to discover resharding.",
    boundedDuration,
    usage = Source)

  val NumberOfRecordsPerFetch: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.getRecords.numberOfRecordsPerFetch",
    Some(10000),
    "Limit passed to each GetRecords call.",
    int(1, 10000),
    usage = Source)

  val FetchInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.getRecords.fetchInterval",
    Some(500L),
    "Least time between two GetRecords calls on one shard: between a task's calls while it drains a backlog, " +
      "and between the end of the batch that read a shard and the next check or read of it. Kinesis allows 5 " +
      "calls per second per shard across all consumers; the default leaves more than half of that to others.",
    duration(0L, 60000L),
    usage = Source)

  val RealTimePollInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.realTime.pollInterval",
    Some(200L),
    "Real-time mode (Trigger.RealTime, Spark 4.1+), polling: least time between two GetRecords calls on one " +
      "shard. A task reads a shard again as soon as this allows while pages bring records, and waits this long " +
      "after an empty page, so a record waits half of it on average. The default spends Kinesis' whole 5 calls " +
      "per second per shard, which every polling consumer of the stream shares: raise it where other " +
      "applications poll the stream too, or use enhanced fan-out (kinesis.consumerType=SubscribeToShard), " +
      "which has its own 2 MB/s per shard and no call budget.",
    duration(50L, 60000L),
    usage = Source)

  val RealTimeMaxTasks: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.realTime.maxTasks",
    None,
    "Real-time mode (Trigger.RealTime, Spark 4.1+): tasks each batch reads the shards with (at most one per shard). " +
      "Spark runs all of a real-time batch's stages at once, so the batch needs these tasks plus every shuffle " +
      "stage's partitions (spark.sql.shuffle.partitions per stateful operator) in free task slots (cores divided " +
      "by spark.task.cpus); a batch that does not fit fails at start, saying so. Default: the slots the query's " +
      "shuffle stages leave, one task per kinesis.shardsPerTask shards while that fits.",
    int(1, 10000),
    usage = Source)

  val IdleShardCheckInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.idleShardCheckInterval",
    Some(1000L),
    "How long the driver waits before checking again a shard whose last check found nothing new: an idle " +
      "shard costs one GetRecords call per this interval. Shorter finds the first record after a quiet spell " +
      "sooner and spends more of the shard's read quota.",
    boundedDuration,
    usage = Source)

  val MaxRecordsPerTrigger: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.maxRecordsPerTrigger",
    None,
    "Most Kinesis records (KPL aggregates count once) one micro-batch reads, split evenly across the shards it " +
      "reads, each at least one (like the Kafka source's maxOffsetsPerTrigger). With Trigger.AvailableNow the run " +
      "takes several batches; Trigger.Once ignores it, as Spark does for every source. Default: no cap.",
    long(1L, Long.MaxValue),
    usage = Source)

  val MaxBytesPerTrigger: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.maxBytesPerTrigger",
    None,
    "Most bytes of Kinesis record data (KPL aggregates as stored) one micro-batch reads, split evenly across the " +
      "shards it reads (Spark's maxBytes read limit). A shard stops before a record that would pass its share, " +
      "except that it always reads at least one record, so a batch passes the cap by less than one record per shard " +
      "it reads. With kinesis.maxRecordsPerTrigger, a shard stops at whichever share it reaches first. With " +
      "Trigger.AvailableNow the run takes several batches; Trigger.Once ignores it. Default: no cap.",
    long(1L, Long.MaxValue, unit = "bytes"),
    usage = Source)

  val MaxBytesPerSecondPerShard: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.getRecords.maxBytesPerSecondPerShard",
    None,
    "Polling: most bytes per second a reader takes from one shard. After a page of B bytes the next GetRecords " +
      "call on that shard waits B divided by this rate (and at least the fetch interval), so a catch-up leaves the " +
      "rest of the shard's 2 MB/s of reads, shared by every polling consumer, to the others: 1048576 leaves " +
      "half. It applies to micro-batch tasks, batch reads and real-time readers; enhanced fan-out, which has 2 " +
      "MB/s per shard of its own, ignores it. Default: the shard's own limit, 2097152 (after a page of B bytes " +
      "Kinesis throttles the shard's calls for B / 2 MiB/s, 5 s after a 10-MiB page: the reader waits that long " +
      "instead of meeting throttling).",
    long(1024L, 2097152L, unit = "bytes per second"),
    usage = Source)

  val DriverRetryTimeout: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.driverRetryTimeout",
    Some(120000L),
    "How long the driver goes on retrying ListShards and its checks for new records when they fail for a " +
      "passing reason (throttling, connection resets, server errors) before the query fails with the last error. A " +
      "run whose first listing of a stream finds nothing at the endpoint (unknown host, connection refused) fails " +
      "at once instead. A task's shard reader retries refused or reset connections and server errors in a row for " +
      "as long before its task fails (throttling, never).",
    boundedDuration,
    usage = Source)

  val ClientNumRetries: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.clientNumRetries",
    Some(3),
    "How often the AWS client retries a failed call before the connector sees the failure.",
    int(0, 100))

  val ClientRetryInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.clientRetryInterval",
    Some(500L),
    "Base delay of the exponential back-off (with jitter) between retries, and after throttling.",
    duration(1L, 600000L))

  val ClientMaxRetryInterval: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.clientMaxRetryInterval",
    Some(10000L),
    "Longest delay between retries.",
    duration(1L, 600000L))

  val MetadataPath: OptionSpec[String] = OptionSpec[String](
    "kinesis.metadataPath",
    None,
    "Directory (any Hadoop file system with atomic rename, such as HDFS or a local path) where tasks record " +
      "where each micro-batch ended in each shard, with kinesis.metadataCommitterType HDFS. Default: inside the " +
      "query's checkpoint location.",
    string("a Hadoop path such as hdfs:///kinesis/metadata or /tmp/metadata"),
    usage = Source)

  val AwsAccessKeyId: OptionSpec[String] = OptionSpec[String](
    "kinesis.awsAccessKeyId",
    None,
    "AWS access key id; give it with kinesis.awsSecretKey. Default: the SDK's default credentials chain.",
    string("an access key id"),
    secret = true)

  val AwsSecretKey: OptionSpec[String] = OptionSpec[String](
    "kinesis.awsSecretKey",
    None,
    "AWS secret access key; give it with kinesis.awsAccessKeyId.",
    string("a secret access key"),
    secret = true)

  val SessionToken: OptionSpec[String] = OptionSpec[String](
    "kinesis.sessionToken",
    None,
    "AWS session token for temporary credentials; needs kinesis.awsAccessKeyId and kinesis.awsSecretKey.",
    string("a session token"),
    secret = true)

  val DropMisroutedAggregates: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.deaggregation.dropMisroutedRecords",
    Some(false),
    "KCL behaviour: drop a KPL sub-record whose hash key lies outside the shard's hash key range (after a " +
      "reshard the KPL re-sends such records to the right shard). false delivers every sub-record.",
    boolean,
    usage = Source)

  val VerifyCertificate: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.verifyCertificate",
    Some(true),
    "Whether TLS certificates of kinesis.endpointUrl are verified. false accepts any certificate and host " +
      "name: only for a local emulator with a self-signed certificate (the sink's KPL speaks HTTPS only).",
    boolean)

  /** The values of kinesis.sink.producer: the Kinesis Producer Library, or the connector's own PutRecords calls. */
  val SinkProducerKpl = "KPL"
  val SinkProducerPutRecords = "PutRecords"

  val SinkProducer: OptionSpec[String] = OptionSpec[String](
    "kinesis.sink.producer",
    Some(SinkProducerKpl),
    "What writes the rows. KPL: the Kinesis Producer Library's native process, which can aggregate rows " +
      "(kinesis.sink.aggregationEnabled) and speaks HTTPS only. PutRecords: the connector's own PutRecords calls " +
      "(the AWS SDK, in the executor's JVM), one Kinesis record per row, no aggregation and no native process: " +
      "up to 500 rows or 5 MiB a call, at most kinesis.sink.maxConnections calls in flight per executor, each " +
      "partition key's rows in order on one of them.",
    oneOf(Seq(SinkProducerKpl, SinkProducerPutRecords)),
    usage = Sink)

  val SinkRecordMaxBufferedTime: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.sink.recordMaxBufferedTime",
    Some(100L),
    "Longest time a record waits in the producer's buffer to be aggregated and collected with others before " +
      "it is sent (KPL RecordMaxBufferedTime). Longer means fewer, fuller requests and more latency.",
    duration(1L, 600000L),
    usage = Sink)

  val SinkMaxConnections: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.sink.maxConnections",
    Some(24),
    "Most connections each executor's producer opens to Kinesis (KPL MaxConnections; 24 is the KPL's default); " +
      "with kinesis.sink.producer=PutRecords, most PutRecords calls in flight.",
    int(1, 256),
    usage = Sink)

  val SinkAggregationEnabled: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.sink.aggregationEnabled",
    Some(true),
    "Whether the producer packs several rows into one Kinesis record (KPL aggregation). Readers must " +
      "de-aggregate, as this connector's source, the KCL and the awslabs connector do. The KPL only: " +
      "kinesis.sink.producer=PutRecords never aggregates.",
    boolean,
    usage = Sink)

  val SinkStrictKeyOrder: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.sink.strictKeyOrder",
    Some(false),
    "Whether a row waits until every earlier row of its stream and partition key on its executor is confirmed. " +
      "Off, rows of a key keep their order only as far as the producer keeps it: a row it retries (throttling, a " +
      "failed request, a KPL still reading the stream's shards) can land after rows handed over later. On, " +
      "each key has one row in flight, so a key writes about one row per kinesis.sink.recordMaxBufferedTime plus a " +
      "request's round trip.",
    boolean,
    usage = Sink)

  val SinkRecordTtl: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.sink.recordTtl",
    Some(30000L),
    "Longest time the producer keeps trying to write a row (KPL RecordTtl). A row not " +
      "written by then fails its task, naming the stream and the last error, and Spark retries the task. Values " +
      "above 2147483647 (about 24.8 days) are read as 2147483647: beyond that the KPL expires every record at once.",
    duration(100L, Long.MaxValue),
    usage = Sink)

  /** The fixed per-task caps beside the per-executor options below (a task's share should stay smaller). */
  val SinkMaxPendingRecordsPerTask = 50000
  val SinkMaxPendingBytesPerTask: Long = 64L * 1024 * 1024

  val SinkMaxPendingRecordsPerExecutor: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.sink.maxPendingRecordsPerExecutor",
    Some(100000),
    "Most rows the write tasks of one executor may have handed to its producer and not yet seen confirmed by " +
      "Kinesis; a task's write waits beyond that, so throttling cannot grow the producer's memory without " +
      s"bound. Each task also holds at most $SinkMaxPendingRecordsPerTask such rows.",
    int(1, 10000000),
    usage = Sink)

  val SinkMaxPendingBytesPerExecutor: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.sink.maxPendingBytesPerExecutor",
    Some(134217728L),
    "Most bytes (partition keys and data) of those rows, 128 MiB by default; the KPL's native process holds " +
      "them outside the JVM heap, in the executor's memory overhead (kinesis.sink.producer=PutRecords: in the " +
      "heap): see docs/sink.md for sizing. Each " +
      s"task also holds at most ${SinkMaxPendingBytesPerTask >> 20} MiB.",
    long(1048576L, 68719476736L, unit = "bytes"),
    usage = Sink)

  val ShardsPerTask: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.shardsPerTask",
    Some(5),
    "Shards one task of a micro-batch reads, each on a thread of its own. A batch has one task per this many " +
      "shards with new records, at least as many tasks as the cluster has cores (one shard each) while there are " +
      "enough such shards, and never more tasks than cores: with fewer cores, each task reads more shards, so " +
      "that every shard of a batch is read at once rather than in waves of tasks. Fewer tasks cost less per " +
      "batch with hundreds of shards; more spread the reading.",
    int(1, 100),
    usage = Source)

  val AllowStreamRemoval: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.allowStreamRemoval",
    Some(false),
    "Whether a query restarted from its checkpoint may read fewer streams than it read before: true forgets the " +
      "streams no longer listed (their positions are lost); false refuses to start, so a typo in the list does " +
      "not silently drop a stream. A stream added to the list is read from kinesis.startingPosition.",
    boolean,
    usage = Source)

  val EndingPosition: OptionSpec[StartingPosition] = OptionSpec[StartingPosition](
    "kinesis.endingPosition",
    None,
    "Where a batch read (spark.read) ends; streaming queries refuse it. LATEST: the records that had arrived when " +
      "the read was planned. AT_TIMESTAMP <ISO-8601>: records that arrived before that instant. A JSON map of shard " +
      "id to {\"iteratorType\": ..., \"iteratorPosition\": ...}: AT_SEQUENCE_NUMBER ends before that record, " +
      "AFTER_SEQUENCE_NUMBER with it, AT_TIMESTAMP (epoch millis) before that instant, LATEST as above; shards the " +
      "map does not name end at LATEST. A batch read starts at kinesis.startingPosition, TRIM_HORIZON when unset " +
      "(as Spark's Kafka source starts batch reads at the earliest offsets).",
    position("LATEST, AT_TIMESTAMP <ISO-8601 instant>, or a JSON map of shard id to position"),
    usage = Source)

  val StsRoleArn: OptionSpec[String] = OptionSpec[String](
    "kinesis.stsRoleArn",
    None,
    "ARN of an IAM role to assume for Kinesis (and the DynamoDB metadata store), with the base credentials: " +
      "kinesis.awsAccessKeyId/awsSecretKey, kinesis.credentialProviderClass, else the default chain. The " +
      "temporary credentials are refreshed before they expire, on the driver and on every executor.",
    matches(
      "arn:aws(-[a-z]+)*:iam::[0-9]{12}:role/[a-zA-Z0-9+=,.@_/-]{1,512}",
      "an IAM role ARN such as arn:aws:iam::123456789012:role/kinesis-reader",
      "it is not an IAM role ARN"))

  val StsSessionName: OptionSpec[String] = OptionSpec[String](
    "kinesis.stsSessionName",
    Some("spark-kinesis"),
    "Session name of the assumed role (it appears in CloudTrail); needs kinesis.stsRoleArn.",
    matches(
      "[a-zA-Z0-9+=,.@_-]{2,64}",
      "2 to 64 characters of a-z A-Z 0-9 and + = , . @ _ -",
      "it is not a valid role session name"))

  val StsExternalId: OptionSpec[String] = OptionSpec[String](
    "kinesis.stsExternalId",
    None,
    "External id passed to AssumeRole, for roles whose trust policy demands one; needs kinesis.stsRoleArn.",
    matches(
      "[a-zA-Z0-9+=,.@:/_-]{2,1224}",
      "2 to 1224 characters of a-z A-Z 0-9 and + = , . @ : / _ -",
      "it is not a valid external id"),
    secret = true)

  val StsEndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.stsEndpointUrl",
    None,
    "STS endpoint for kinesis.stsRoleArn, for VPC endpoints and local emulators. Default: the regional STS " +
      "endpoint of kinesis.region.",
    url("https://sts.us-east-1.amazonaws.com"))

  val CredentialProviderClass: OptionSpec[String] = OptionSpec[String](
    "kinesis.credentialProviderClass",
    None,
    "Class of the base credentials, on the driver's and executors' class path, implementing the AWS SDK for " +
      "Java v2's AwsCredentialsProvider; built with a public constructor taking kinesis.credentialProviderParam " +
      "(a String) when that is set, else with a public no-argument constructor. Instead of " +
      "kinesis.awsAccessKeyId/awsSecretKey.",
    new Parser(
      "string",
      "a fully qualified name of such a class, such as com.example.VaultCredentialsProvider",
      // Loaded when the DataFrame is created, so a missing class or one of the wrong type fails at once.
      raw => UserCredentialsProvider.loadClass(raw).map(_ => raw)))

  val CredentialProviderParam: OptionSpec[String] = OptionSpec[String](
    "kinesis.credentialProviderParam",
    None,
    "The String handed to the constructor of kinesis.credentialProviderClass; needs that option.",
    string("any text"),
    secret = true)

  val MetadataCommitterType: OptionSpec[String] = OptionSpec[String](
    "kinesis.metadataCommitterType",
    Some("HDFS"),
    "Where tasks record where each micro-batch ended. HDFS: files under kinesis.metadataPath, on a Hadoop file " +
      "system with an atomic no-overwrite rename (HDFS, a local or mounted disk; object stores such as s3a:// " +
      "and gs:// are refused). DYNAMODB: items in the DynamoDB table kinesis.dynamodb.tableName, for checkpoints " +
      "on S3 and other object stores.",
    oneOf(Seq("HDFS", "DYNAMODB")),
    usage = Source)

  val DynamoDbTableName: OptionSpec[String] = OptionSpec[String](
    "kinesis.dynamodb.tableName",
    Some("spark-kinesis-metadata"),
    "DynamoDB table of the DYNAMODB metadata store, in kinesis.region with the Kinesis credentials; created " +
      "(on-demand billing) if missing. Several queries can share it: each keeps its items under its checkpoint " +
      "location.",
    matches(
      "[a-zA-Z0-9_.-]{3,255}",
      "a table name, 3 to 255 characters of a-z A-Z 0-9 _ . -",
      "it is not a valid DynamoDB table name"),
    usage = Source)

  val DynamoDbEndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.dynamodb.endpointUrl",
    None,
    "DynamoDB endpoint of the DYNAMODB metadata store, for VPC endpoints and DynamoDB Local. Default: the " +
      "regional endpoint of kinesis.region.",
    url("https://dynamodb.us-east-1.amazonaws.com"),
    usage = Source)

  val EmitConsumerLagMetrics: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.emitConsumerLagMetrics",
    Some(false),
    "Whether the driver publishes each stream's consumer lag (MillisBehindLatest, max and average) and its batches' " +
      "records, bytes and calls to CloudWatch, as Glue's emitConsumerLagMetrics and the KCL do: at most one " +
      "PutMetricData per stream per minute, with the Kinesis credentials, which need cloudwatch:PutMetricData. A " +
      "failed publication is logged and never fails the query.",
    boolean,
    usage = Source)

  val CloudWatchNamespace: OptionSpec[String] = OptionSpec[String](
    "kinesis.cloudwatch.namespace",
    Some("SparkKinesis"),
    "CloudWatch namespace of the metrics kinesis.emitConsumerLagMetrics publishes.",
    matches(
      "(?!AWS/)(?=.*[^ ])[a-zA-Z0-9._/#: -]{1,255}",
      "1 to 255 characters of a-z A-Z 0-9 . - _ / # : and space, not starting with AWS/",
      "it is not a custom CloudWatch namespace"),
    usage = Source)

  val CloudWatchDimensions: OptionSpec[Seq[(String, String)]] = OptionSpec[Seq[(String, String)]](
    "kinesis.cloudwatch.dimensions",
    Some(Seq("StreamName" -> "{stream}", "Application" -> "{app}")),
    "Dimensions of the metrics kinesis.emitConsumerLagMetrics publishes: comma-separated Name=Value pairs, where a " +
      "value may hold {stream} (the stream's name), {app} (the Spark application's name) and {queryId} (the " +
      "streaming query's id, which survives restarts from the checkpoint).",
    dimensions,
    usage = Source)

  val CloudWatchEndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.cloudwatch.endpointUrl",
    None,
    "CloudWatch endpoint of kinesis.emitConsumerLagMetrics, for VPC endpoints and emulators. Default: the regional " +
      "endpoint of kinesis.cloudwatch.region.",
    url("https://monitoring.us-east-1.amazonaws.com"),
    usage = Source)

  val CloudWatchRegion: OptionSpec[String] = OptionSpec[String](
    "kinesis.cloudwatch.region",
    None,
    "AWS region kinesis.emitConsumerLagMetrics publishes to. Default: the stream's (kinesis.region).",
    region,
    usage = Source)

  val GlueEndpointUrl: OptionSpec[java.net.URI] = OptionSpec[java.net.URI](
    "kinesis.glue.endpointUrl",
    None,
    "AWS Glue endpoint of the Glue Schema Registry that from_glue_schema_registry and to_glue_schema_registry " +
      "reach (with the Kinesis region and credentials), for VPC endpoints and emulators. Default: the regional " +
      "endpoint of kinesis.region.",
    url("https://glue.us-east-1.amazonaws.com"))

  val CheckNewRecordThreads: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.checkNewRecordThreads",
    Some(8),
    "Driver threads that check idle shards for new records, each check one GetRecords call. One look at the " +
      "shards checks at most 8 per thread (the most overdue first), so with thousands of idle shards more threads " +
      "check each shard more often. A run's first look checks every shard; without a read limit " +
      "(kinesis.maxRecordsPerTrigger, kinesis.maxBytesPerTrigger) it checks as many at once as there are threads, " +
      "until one has records, and reads the rest in its first batch without a check.",
    int(1, 64),
    usage = Source)

  val ConsumerName: OptionSpec[String] = OptionSpec[String](
    "kinesis.consumerName",
    None,
    "Enhanced fan-out, managed consumer: the name of the stream consumer this query reads through. It is " +
      "registered if absent (and waited for until ACTIVE) and reused if present. Give each query its own: one " +
      "consumer's subscription to a shard is exclusive.",
    matches(
      "[a-zA-Z0-9_.-]{1,128}",
      "a consumer name, 1 to 128 characters of a-z A-Z 0-9 _ . -",
      "it is not a valid consumer name"),
    usage = Source)

  val ConsumerArn: OptionSpec[String] = OptionSpec[String](
    "kinesis.consumerArn",
    None,
    "Enhanced fan-out, self-managed consumer: the ARN of an existing stream consumer; the connector never " +
      "registers or deregisters it.",
    matches(
      "arn:[a-z0-9-]+:kinesis:[a-z0-9-]+:[0-9]+:stream/[a-zA-Z0-9_.-]+/consumer/[a-zA-Z0-9_.-]+:[0-9]+",
      "a consumer ARN such as arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000",
      "it is not a stream consumer ARN"),
    usage = Source)

  val DeregisterConsumerOnStop: OptionSpec[Boolean] = OptionSpec[Boolean](
    "kinesis.deregisterConsumerOnStop",
    Some(true),
    "Whether a query deregisters the consumer named by kinesis.consumerName when it stops, so it stops costing " +
      "money. Only a consumer this query registered (as its checkpoint records) is deregistered: one that " +
      "existed before the query first started is never touched. false keeps it for the next run.",
    boolean,
    usage = Source)

  val ConsumerTagsOption: OptionSpec[Map[String, String]] = OptionSpec[Map[String, String]](
    "kinesis.consumerTags",
    None,
    "Enhanced fan-out, managed consumer: tags put on the consumer this query registers (kinesis.consumerName), " +
      "for cost allocation and tag-based access; they need the kinesis:TagResource permission besides " +
      "kinesis:RegisterStreamConsumer. The connector adds tags of its own under spark-kinesis/ naming the query's " +
      "checkpoint (python -m pyspark_kinesis consumers reads them). A consumer that exists already keeps its tags.",
    tags,
    usage = Source)

  val SubscribeToShardTimeout: OptionSpec[Long] = OptionSpec[Long](
    "kinesis.subscribeToShard.timeout",
    Some(20000L),
    "Enhanced fan-out: longest time a task waits for the next event of a subscription, caught up or not, before it " +
      "takes the subscription for dead (a stream gone silent), cancels it and subscribes again from " +
      "the last record received. Kinesis sends events every few seconds while a shard is idle.",
    duration(1000L, 300000L, bareUnit = "s"),
    usage = Source)

  val SubscribeToShardMaxRetries: OptionSpec[Int] = OptionSpec[Int](
    "kinesis.subscribeToShard.maxRetries",
    Some(10),
    "Enhanced fan-out: how often in a row a task subscribes again after a failed or refused subscription " +
      "(ResourceInUse, LimitExceeded, connection reset, timeout), with jittered back-off, before the task fails.",
    int(0, 100),
    usage = Source)

  /** Every option, in the order docs/options.md lists them. */
  val all: Seq[OptionSpec[_]] = Seq(
    StreamName,
    StreamARN,
    Region,
    EndpointUrl,
    ConsumerType,
    StartingPositionOption,
    FailOnDataLoss,
    MaxFetchRecordsPerShard,
    MaxFetchTimePerShard,
    DescribeShardInterval,
    NumberOfRecordsPerFetch,
    FetchInterval,
    IdleShardCheckInterval,
    RealTimePollInterval,
    RealTimeMaxTasks,
    MaxRecordsPerTrigger,
    MaxBytesPerTrigger,
    MaxBytesPerSecondPerShard,
    DriverRetryTimeout,
    ClientNumRetries,
    ClientRetryInterval,
    ClientMaxRetryInterval,
    MetadataPath,
    AwsAccessKeyId,
    AwsSecretKey,
    SessionToken,
    DropMisroutedAggregates,
    VerifyCertificate,
    SinkProducer,
    SinkRecordMaxBufferedTime,
    SinkMaxConnections,
    SinkAggregationEnabled,
    SinkStrictKeyOrder,
    SinkRecordTtl,
    SinkMaxPendingRecordsPerExecutor,
    SinkMaxPendingBytesPerExecutor,
    ShardsPerTask,
    AllowStreamRemoval,
    EndingPosition,
    CheckNewRecordThreads,
    StsRoleArn,
    StsSessionName,
    StsExternalId,
    StsEndpointUrl,
    CredentialProviderClass,
    CredentialProviderParam,
    MetadataCommitterType,
    DynamoDbTableName,
    DynamoDbEndpointUrl,
    EmitConsumerLagMetrics,
    CloudWatchNamespace,
    CloudWatchDimensions,
    CloudWatchEndpointUrl,
    CloudWatchRegion,
    ConsumerName,
    ConsumerArn,
    DeregisterConsumerOnStop,
    ConsumerTagsOption,
    SubscribeToShardTimeout,
    SubscribeToShardMaxRetries,
    GlueEndpointUrl)

  /** The rules across options, checked in this order after every value ([[OptionRules]]). */
  def rules: Seq[OptionRule] = OptionRules.all

  /**
   * The option names of the awslabs, qubole/roncemer and Databricks connectors accepted as they documented them (see
   * [[OptionAliases]]).
   */
  val aliases: Seq[OptionAlias] = OptionAliases.all

  private val byKey: Map[String, OptionSpec[_]] = all.map(o => o.key -> o).toMap

  def find(name: String): Option[OptionSpec[_]] = byKey.get(name.toLowerCase(java.util.Locale.ROOT))
}
