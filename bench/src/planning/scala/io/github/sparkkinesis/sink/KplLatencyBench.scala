package io.github.sparkkinesis.sink

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import io.github.sparkkinesis.client.{AwsCredentials, ClientSettings, RetrySettings, SdkKinesisClient}
import io.github.sparkkinesis.compat.JavaCollections._
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{CreateStreamRequest, DescribeStreamSummaryRequest, StreamStatus}

/**
 * Where a record's time goes between the sink's hand-over and Kinesis's confirmation, against kinesis-mock: in one run,
 * single small records one every `intervalMs` through (1) PutRecord calls of the connector's own client on the plain
 * port, (2) the same on the TLS port, (3) the sink's Kinesis Producer Library producer ([[KplProducer]], the sink's
 * default options) on the TLS port and (4) the same with `kinesis.sink.recordMaxBufferedTime` 10 ms; each record's time
 * from hand-over to confirmation. With a third argument, (5) the KPL once more through that HTTPS port
 * (`bench/continue-front.py`, which answers `Expect: 100-continue` as AWS does and the emulator does not). Run by
 * `bench/run --only kpl [records intervalMs [frontPort]]`; bench/README.md has the figures.
 */
object KplLatencyBench {

  private val RegionName = "us-east-1"
  private val Credentials = AwsCredentials("AKIDBENCH", "bench-secret", None)

  def main(args: Array[String]): Unit = {
    val records = args.headOption.map(_.toInt).getOrElse(150)
    val intervalMs = args.lift(1).map(_.toLong).getOrElse(20L)
    val proxyPort = args.lift(2).map(_.toInt)
    val plain = URI.create(sys.env("KINESIS_MOCK_ENDPOINT"))
    val tls = URI.create(s"https://${plain.getHost}:${sys.env("KINESIS_MOCK_TLS_PORT")}")
    val stream = s"kpl-latency-${System.currentTimeMillis()}"
    createStream(plain, stream)
    println(s"kpl: one record every $intervalMs ms, $records records per writer (after 10 warm-up records), " +
      s"ms from hand-over to confirmation")
    println("| writer | p50 | p95 | p99 | max |")
    println("|---|---|---|---|---|")
    def sdk(endpoint: URI, name: String): Unit = {
      val client = new SdkKinesisClient(clientSettings(endpoint))
      try report(
          name,
          measure(records, intervalMs)(r =>
            onDone => {
              client.writeRecord(r.stream, r.partitionKey, None, r.data)
              onDone(SendResult.Written(1))
            })(stream))
      finally client.close()
    }
    def kpl(endpoint: URI, bufferedMs: Long, name: String): Unit = {
      val producer = new KplProducer(producerSettings(endpoint, bufferedMs))
      try report(name, measure(records, intervalMs)(r => onDone => producer.send(r, onDone))(stream))
      finally producer.destroy()
    }
    sdk(plain, s"connector's client, PutRecord, $plain")
    sdk(tls, s"connector's client, PutRecord, $tls")
    kpl(tls, 100L, s"sink's KPL producer, defaults (recordMaxBufferedTime 100 ms), $tls")
    kpl(tls, 10L, s"sink's KPL producer, recordMaxBufferedTime 10 ms, $tls")
    proxyPort.foreach { port =>
      val front = URI.create(s"https://${plain.getHost}:$port")
      kpl(front, 100L, s"sink's KPL producer, defaults, continue-front.py port $port")
    }
  }

  private def clientSettings(endpoint: URI) = ClientSettings(
    Some(RegionName),
    Some(endpoint),
    Some(Credentials),
    RetrySettings(3, 100L, 1000L),
    verifyCertificate = false)

  private def producerSettings(endpoint: URI, bufferedMs: Long) = ProducerSettings(
    clientSettings(endpoint),
    recordMaxBufferedTimeMs = bufferedMs,
    maxConnections = 24,
    aggregationEnabled = true,
    recordTtlMs = 30000L,
    maxPendingRecords = 100000,
    maxPendingBytes = 1L << 26)

  /**
   * Hands `warmUp` then `records` records, one every `intervalMs`, to `send` (on this thread, as a task does) and
   * returns each counted record's milliseconds from hand-over to its `onDone`.
   */
  private def measure(records: Int, intervalMs: Long, warmUp: Int = 10)(
      send: OutgoingRecord => (SendResult => Unit) => Unit)(stream: String): Seq[Double] = {
    val times = new ConcurrentLinkedQueue[java.lang.Double]()
    val done = new CountDownLatch(records + warmUp)
    val start = System.nanoTime()
    for (i <- 0 until records + warmUp) {
      val due = start + TimeUnit.MILLISECONDS.toNanos(i * intervalMs)
      val wait = due - System.nanoTime()
      if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait)
      val record = OutgoingRecord(stream, s"key-${i % 8}", None, s"record-$i".getBytes(UTF_8))
      val handedOver = System.nanoTime()
      send(record) { result =>
        require(result.isInstanceOf[SendResult.Written], s"record $i was not written: $result")
        if (i >= warmUp) times.add((System.nanoTime() - handedOver) / 1e6)
        done.countDown()
      }
    }
    require(done.await(120, TimeUnit.SECONDS), "records were not confirmed within 120 s")
    times.asScala.map(_.doubleValue).toVector.sorted
  }

  private def report(name: String, sorted: Seq[Double]): Unit = {
    def at(q: Double) = sorted(math.min(sorted.size - 1, math.ceil(q * sorted.size).toInt - 1))
    println(f"| $name | ${at(0.5)}%.1f | ${at(0.95)}%.1f | ${at(0.99)}%.1f | ${sorted.last}%.1f |")
  }

  private def createStream(endpoint: URI, stream: String): Unit = {
    val sdk = KinesisClient.builder().endpointOverride(endpoint).region(_root_.software.amazon.awssdk.regions.Region.of(
      RegionName)).credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
      Credentials.accessKeyId,
      Credentials.secretKey))).build()
    try {
      sdk.createStream(CreateStreamRequest.builder().streamName(stream).shardCount(1).build())
      val deadline = System.currentTimeMillis() + 30000L
      while (sdk.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
          .streamDescriptionSummary.streamStatus != StreamStatus.ACTIVE) {
        require(System.currentTimeMillis() < deadline, s"stream $stream did not become ACTIVE within 30 s")
        Thread.sleep(100)
      }
    } finally sdk.close()
  }
}
