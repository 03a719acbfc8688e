package io.github.sparkkinesis.client

import java.net.{InetAddress, ServerSocket}

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.options.KinesisSourceOptions

/**
 * The real SDK client at an endpoint where nothing answers, with the default client options (its own retries and
 * back-off included): the failure comes within the 15 s a query's first contact may take, and says why.
 */
class UnreachableEndpointSuite extends AnyFunSuite with Matchers {

  private def clientAt(endpoint: String): SdkKinesisClient = new SdkKinesisClient(KinesisSourceOptions.parse(Map(
    "kinesis.streamName" -> "orders",
    "kinesis.endpointUrl" -> endpoint,
    "kinesis.region" -> "us-east-1",
    "kinesis.awsAccessKeyId" -> "AKID",
    "kinesis.awsSecretKey" -> "secret")).client)

  /** A port on the loopback interface that nothing listens on (it was just free). */
  private def closedPort(): Int = {
    val socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress)
    try socket.getLocalPort
    finally socket.close()
  }

  private def timed[T](body: => T): (T, Long) = {
    val start = System.nanoTime()
    val result = body
    (result, (System.nanoTime() - start) / 1000000L)
  }

  test("Given a closed port on 127.0.0.1, when ListShards is called, then UnreachableException names the endpoint " +
    "within 15 s") {
    val endpoint = s"http://127.0.0.1:${closedPort()}"
    val client = clientAt(endpoint)
    try {
      val (error, ms) = timed(intercept[UnreachableException](client.listShards("orders")))
      error.getMessage should (include(s"Cannot reach Kinesis at $endpoint (option kinesis.endpointUrl)") and
        include("connection was refused") and include("stream 'orders'"))
      ms should be < 15000L
    } finally client.close()
  }

  test("Given a host name that does not resolve, when ListShards is called, then UnreachableException says so " +
    "within 15 s") {
    val client = clientAt("https://kinesis.nowhere.invalid")
    try {
      val (error, ms) = timed(intercept[UnreachableException](client.listShards("orders")))
      error.getMessage should (include("https://kinesis.nowhere.invalid") and include("does not resolve"))
      ms should be < 15000L
    } finally client.close()
  }
}
