package io.github.sparkkinesis.bench

import java.net.URI
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.collection.JavaConverters._

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.http.SdkHttpConfigurationOption
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsRequestEntry}
import software.amazon.awssdk.utils.AttributeMap

import io.github.sparkkinesis.it.{KinesisMock, TestStreams}

/** What the raw writer took: PutRecords calls (retries included), entries it had to send again, and the time. */
final case class RawPutResult(calls: Int, retriedEntries: Int, seconds: Double)

/**
 * The sink's baseline: a plain AWS SDK v2 client (unshaded, Apache HTTP client) writing the rows of [[SinkRows]] with
 * PutRecords, 500 entries per call (the Kinesis maximum), calls spread over a pool of `rawThreads` threads; entries a
 * call refuses are sent again (bounded). The entries are built before the clock starts, so only the calls are timed.
 */
object RawPut {

  private val EntriesPerCall = 500
  private val MaxAttempts = 20

  /**
   * A client of the benchmark's TLS port, as the sink's KPL uses, accepting its self-signed certificate: it tells how
   * much of the difference between the sink and the plain-HTTP client is TLS (the emulator's, or bench/run's
   * `BENCH_FRONT`'s and the emulator's plain port behind it).
   */
  lazy val tlsClient: KinesisClient = tlsClientOf(KinesisMock.tlsEndpoint)

  /** A client of the TLS endpoint `endpoint`, accepting any certificate. */
  def tlsClientOf(endpoint: String): KinesisClient = KinesisClient.builder()
    .endpointOverride(URI.create(endpoint))
    .region(Region.of(TestStreams.Region))
    .credentialsProvider(StaticCredentialsProvider.create(
      AwsBasicCredentials.create(TestStreams.AccessKeyId, TestStreams.SecretKey)))
    .httpClient(ApacheHttpClient.builder().buildWithDefaults(AttributeMap.builder()
      .put(SdkHttpConfigurationOption.TRUST_ALL_CERTIFICATES, java.lang.Boolean.TRUE).build()))
    .build()

  /** Writes rows `from` until `end` through `client`. */
  def run(client: KinesisClient, stream: String, from: Int, end: Int, config: SinkConfig): RawPutResult = {
    val calls = (from until end).grouped(EntriesPerCall).map { chunk =>
      chunk.map { i =>
        PutRecordsRequestEntry.builder()
          .partitionKey(SinkRows.partitionKey(i.toLong, config))
          .data(SdkBytes.fromByteArray(SinkRows.payload(i.toLong, config)))
          .build()
      }.toVector
    }.toVector
    val pool = Executors.newFixedThreadPool(config.rawThreads)
    val started = System.nanoTime()
    try {
      val results = calls.map { entries =>
        pool.submit(new Callable[(Int, Int)] { override def call(): (Int, Int) = put(client, stream, entries) })
      }.map(_.get())
      RawPutResult(results.map(_._1).sum, results.map(_._2).sum, (System.nanoTime() - started) / 1e9)
    } finally {
      pool.shutdownNow()
      pool.awaitTermination(10, TimeUnit.SECONDS)
    }
  }

  /**
   * One PutRecords call, then again for the entries the emulator refused, after a growing pause (bounded); returns the
   * calls made and the entries sent again.
   */
  private[bench] def put(client: KinesisClient, stream: String, entries: Vector[PutRecordsRequestEntry]): (Int, Int) = {
    var remaining = entries
    var attempts = 0
    var retried = 0
    while (remaining.nonEmpty) {
      if (attempts == MaxAttempts) {
        throw new IllegalStateException(s"${remaining.size} entries still refused by PutRecords on $stream after " +
          s"$MaxAttempts attempts")
      }
      if (attempts > 0) {
        retried += remaining.size
        Thread.sleep(100L * attempts) // refused (throttled): let the shards' write budget refill
      }
      attempts += 1
      val response = client.putRecords(
        PutRecordsRequest.builder().streamName(stream).records(remaining.asJava).build())
      remaining = remaining.zip(response.records().asScala).collect { case (e, r) if r.errorCode() != null => e }
    }
    (attempts, retried)
  }
}
