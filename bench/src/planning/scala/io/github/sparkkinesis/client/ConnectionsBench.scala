package io.github.sparkkinesis.client

import java.net.{InetSocketAddress, URI}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, Executors}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger}
import java.util.function.IntBinaryOperator

import com.sun.net.httpserver.{HttpExchange, HttpServer}

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * One executor's polling in real-time mode at scale: `shards` threads, each calling GetRecords every 200 ms (the
 * default `kinesis.realTime.pollInterval`), through the one [[SdkKinesisClient]] the executor shares, against a local
 * endpoint that answers each call after `latencyMs` (an AWS call's round trip; the emulator on loopback answers in
 * about a millisecond, which hides any queue for connections). Prints the calls per second achieved against the paced
 * target, the client-side time per call, and how much of it went on waiting for a connection ("queue": the mean time
 * per call beyond the endpoint's, the client's own work of a millisecond or so included), with the most calls the
 * endpoint saw at once. Run by `bench/run --only connections [shards latencyMs]`.
 */
object ConnectionsBench {

  private val PollIntervalMs = 200L
  private val WarmUpMs = 3000L
  private val MeasureMs = 20000L
  private val Max: IntBinaryOperator = (a: Int, b: Int) => math.max(a, b)

  def main(args: Array[String]): Unit = {
    val shards = args.headOption.map(_.toInt).getOrElse(200)
    val latencyMs = args.lift(1).map(_.toLong).getOrElse(50L)
    System.setProperty("aws.cborEnabled", "false") // the stub answers JSON; the SDK reads its CBOR errors otherwise
    val endpoint = new StubEndpoint(latencyMs, threads = shards + 16)
    val client = new SdkKinesisClient(ClientSettings(
      Some("us-east-1"),
      Some(URI.create(s"http://127.0.0.1:${endpoint.port}")),
      Some(AwsCredentials("AKIDBENCH", "bench-secret", None)),
      RetrySettings(0, 100L, 1000L)))
    try {
      val callMs = new ConcurrentLinkedQueue[java.lang.Double]()
      val measuring = new AtomicBoolean(false)
      val pool = Executors.newFixedThreadPool(shards)
      val started = System.currentTimeMillis()
      val done = new CountDownLatch(shards)
      (0 until shards).foreach { i =>
        pool.execute(() =>
          try {
            var next = started + i * PollIntervalMs / shards // spread, as shards' feeds start at different times
            while (System.currentTimeMillis() < started + WarmUpMs + MeasureMs) {
              val wait = next - System.currentTimeMillis()
              if (wait > 0) Thread.sleep(wait)
              next = math.max(next + PollIntervalMs, System.currentTimeMillis())
              val t0 = System.nanoTime()
              client.getRecords("bench", "iterator", 10000)
              if (measuring.get()) callMs.add((System.nanoTime() - t0) / 1e6)
            }
          } finally done.countDown())
      }
      Thread.sleep(WarmUpMs)
      endpoint.peak.set(0)
      measuring.set(true)
      done.await()
      pool.shutdown()
      val calls = callMs.asScala.map(_.doubleValue).toVector.sorted
      val perSecond = calls.size * 1000.0 / MeasureMs
      val mean = calls.sum / math.max(1, calls.size)
      def pct(p: Double) = calls((p * (calls.size - 1)).toInt)
      println("connections: one executor's real-time polling through its shared client (GetRecords every 200 ms each)")
      println(f"${"shards"}%7s ${"latency"}%8s ${"target/s"}%9s ${"calls/s"}%8s ${"mean ms"}%8s ${"p50 ms"}%7s " +
        f"${"p99 ms"}%7s ${"queue ms"}%9s ${"at once"}%8s")
      println(f"$shards%7d $latencyMs%8d ${shards * 1000.0 / PollIntervalMs}%9.0f $perSecond%8.0f $mean%8.1f " +
        f"${pct(0.5)}%7.1f ${pct(0.99)}%7.1f ${mean - endpoint.meanServedMs}%9.1f ${endpoint.peak.get}%8d")
    } finally {
      client.close()
      endpoint.stop()
    }
  }

  /**
   * A Kinesis endpoint that answers every call with an empty GetRecords page after `latencyMs`, counting calls at once.
   */
  private final class StubEndpoint(latencyMs: Long, threads: Int) {
    private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024)
    private val inFlight = new AtomicInteger()
    val peak = new AtomicInteger()
    private val served = new ConcurrentLinkedQueue[java.lang.Double]()
    private val body =
      """{"Records":[],"NextShardIterator":"iterator","MillisBehindLatest":0}""".getBytes(UTF_8)
    private val handlers = Executors.newFixedThreadPool(threads)
    server.setExecutor(handlers)
    server.createContext("/", (exchange: HttpExchange) => answer(exchange))
    server.start()

    def port: Int = server.getAddress.getPort

    def meanServedMs: Double = {
      val all = served.asScala.map(_.doubleValue)
      all.sum / math.max(1, all.size)
    }

    def stop(): Unit = {
      server.stop(0)
      handlers.shutdownNow() // its threads would keep the JVM alive
    }

    private def answer(exchange: HttpExchange): Unit = {
      val t0 = System.nanoTime()
      val now = inFlight.incrementAndGet()
      peak.accumulateAndGet(now, Max)
      try {
        val request = exchange.getRequestBody
        val buffer = new Array[Byte](8192)
        while (request.read(buffer) >= 0) () // the request is read whole before the answer, as a server does
        Thread.sleep(latencyMs)
        exchange.getResponseHeaders.add("Content-Type", "application/x-amz-json-1.1")
        exchange.sendResponseHeaders(200, body.length.toLong)
        exchange.getResponseBody.write(body)
      } finally {
        exchange.close()
        inFlight.decrementAndGet()
        served.add((System.nanoTime() - t0) / 1e6)
      }
    }
  }
}
