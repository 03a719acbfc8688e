package io.github.sparkkinesis.client

/**
 * The calls the sink makes through the connector's own client rather than through the Kinesis Producer Library: reading
 * a stream's record size limit, writing one record too large for the KPL, and writing rows with PutRecords calls
 * (`kinesis.sink.producer=PutRecords`). Every failure of a whole call is a [[KinesisClientException]]; throttling is a
 * [[ThrottledException]].
 */
trait SinkClient {

  /**
   * The largest record the stream takes, partition key and data together, in KiB (DescribeStreamSummary's
   * `MaxRecordSizeInKiB`, 1024 to 10240); None when the endpoint does not report it (kinesis-mock).
   */
  def maxRecordSizeInKiB(streamName: String): Option[Int]

  /** One PutRecord call, which Kinesis answers once the record is stored; returns its sequence number. */
  def writeRecord(streamName: String, partitionKey: String, explicitHashKey: Option[String], data: Array[Byte]): String

  /**
   * One PutRecords call of at most 500 entries: what Kinesis did with each entry, in the entries' order. An entry can
   * be refused while the others are stored (throttling of its shard, an internal failure): the caller sends it again.
   */
  def writeRecords(streamName: String, entries: Seq[PutEntry]): Seq[PutOutcome]
}

/** One record of a PutRecords call. */
final case class PutEntry(partitionKey: String, explicitHashKey: Option[String], data: Array[Byte])

/** What Kinesis did with one entry of a PutRecords call. */
sealed trait PutOutcome

object PutOutcome {

  /** Stored, under `sequenceNumber`. */
  final case class Stored(sequenceNumber: String) extends PutOutcome

  /**
   * Not stored: AWS's `ErrorCode` (ProvisionedThroughputExceededException or InternalFailure) and `ErrorMessage`. Both
   * say to send the entry again.
   */
  final case class Refused(errorCode: String, errorMessage: String) extends PutOutcome
}

object SinkClient {

  /** `client` as a [[SinkClient]]; every client the connector builds is one. */
  def of(client: KinesisClient): SinkClient = client match {
    case c: SinkClient => c
    case other =>
      throw new IllegalStateException(s"$other cannot make the sink's calls (PutRecord, DescribeStreamSummary)")
  }
}
