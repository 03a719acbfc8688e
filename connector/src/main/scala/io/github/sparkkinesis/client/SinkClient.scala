package io.github.sparkkinesis.client

/**
 * The calls the sink makes through the connector's own client rather than through the Kinesis Producer Library: reading
 * a stream's record size limit, and writing one record too large for the KPL. Every failure is a
 * [[KinesisClientException]]; throttling is a [[ThrottledException]].
 */
trait SinkClient {

  /**
   * The largest record the stream takes, partition key and data together, in KiB (DescribeStreamSummary's
   * `MaxRecordSizeInKiB`, 1024 to 10240); None when the endpoint does not report it (kinesis-mock).
   */
  def maxRecordSizeInKiB(streamName: String): Option[Int]

  /** One PutRecord call, which Kinesis answers once the record is stored; returns its sequence number. */
  def writeRecord(streamName: String, partitionKey: String, explicitHashKey: Option[String], data: Array[Byte]): String
}

object SinkClient {

  /** `client` as a [[SinkClient]]; every client the connector builds is one. */
  def of(client: KinesisClient): SinkClient = client match {
    case c: SinkClient => c
    case other =>
      throw new IllegalStateException(s"$other cannot make the sink's calls (PutRecord, DescribeStreamSummary)")
  }
}
