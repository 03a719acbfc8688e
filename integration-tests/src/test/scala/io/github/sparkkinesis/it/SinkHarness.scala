package io.github.sparkkinesis.it

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8

import io.github.sparkkinesis.aggregation.KplDeaggregator

/** What the sink tests share: the sink's options against the emulator, and reading a stream back row by row. */
object SinkHarness {

  /** One row as it arrived: its stream, shard, partition key and payload (KPL aggregates already unpacked). */
  final case class Landed(stream: String, shardId: String, partitionKey: String, payload: String)

  /** The sink's options for the emulator's TLS port (the KPL speaks HTTPS only), `extra` added or overriding. */
  def sinkOptions(stream: Option[String], extra: (String, String)*): Map[String, String] =
    Map(
      "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
      "kinesis.verifyCertificate" -> "false",
      "kinesis.region" -> TestStreams.Region,
      "kinesis.awsAccessKeyId" -> TestStreams.AccessKeyId,
      "kinesis.awsSecretKey" -> TestStreams.SecretKey) ++
      stream.map("kinesis.streamName" -> _) ++ extra

  /** The emulator's TLS port, for a proxy in front of it. */
  def tlsPort: Int = URI.create(KinesisMock.tlsEndpoint).getPort

  /**
   * Every row in `stream`, read with a plain SDK client from TRIM_HORIZON and de-aggregated, plus the number of Kinesis
   * records they came in (fewer than rows when the producer aggregated).
   */
  def readBack(stream: String): (Seq[Landed], Int) = {
    val records = TestStreams.readStream(stream)
    val rows = records.flatMap { case (shardId, record) =>
      KplDeaggregator.deaggregate(record.data().asByteArray(), record.partitionKey()).map { user =>
        Landed(stream, shardId, user.partitionKey, new String(user.data, UTF_8))
      }
    }
    (rows, records.size)
  }

  /** (partitionKey, payload) of each row, the multiset a write is checked against. */
  def keyed(rows: Seq[Landed]): Seq[(String, String)] = rows.map(r => (r.partitionKey, r.payload))
}
