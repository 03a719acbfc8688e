package io.github.sparkkinesis.it

import java.net.{InetAddress, ServerSocket}

import org.apache.spark.sql.streaming.StreamingQueryException
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * A query or write whose first contact with Kinesis fails for a reason retrying cannot fix (nothing listens at the
 * endpoint, the stream does not exist) fails within 15 s, saying what to check, instead of retrying for
 * kinesis.driverRetryTimeout.
 */
class FastFailureSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private val Bound = 15000L

  /** A port on 127.0.0.1 that nothing listens on (it was just free). */
  private def closedPort(): Int = {
    val socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress)
    try socket.getLocalPort
    finally socket.close()
  }

  /** The error `body` fails with, all its causes' messages joined, and how long it took in ms. */
  private def failureOf(body: => Unit): (String, Long) = {
    val start = System.nanoTime()
    val error = intercept[Exception](body)
    val ms = (System.nanoTime() - start) / 1000000L
    (Iterator.iterate[Throwable](error)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / "), ms)
  }

  /**
   * Starts a streaming query of `options` into the noop sink and waits (at most twice the bound) for it to fail; the
   * time counts from the query's start, not the session's.
   */
  private def streamingFailure(options: (String, String)*): (String, Long) = {
    val writer = readKinesis("unused", "TRIM_HORIZON", options: _*).writeStream.format("noop")
      .option("checkpointLocation", newCheckpointDir())
    failureOf {
      val query = writer.start()
      try {
        if (!query.awaitTermination(2 * Bound)) fail(s"the query was still running after ${2 * Bound} ms")
      } finally query.stop()
    }
  }

  test("Given a closed port on 127.0.0.1 as the endpoint, when a streaming query starts, then it fails within 15 s " +
    "naming the endpoint and the option") {
    val endpoint = s"http://127.0.0.1:${closedPort()}"
    val (message, ms) = streamingFailure("kinesis.streamName" -> "it-unreachable", "kinesis.endpointUrl" -> endpoint)
    message should (include(s"Cannot reach Kinesis at $endpoint (option kinesis.endpointUrl)") and
      include("connection was refused"))
    ms should be < Bound
  }

  test("Given a stream that does not exist, when a streaming query starts, then it fails within 15 s naming the " +
    "stream and the options to check") {
    val missing = s"it-missing-${java.util.UUID.randomUUID().toString.take(8)}"
    val (message, ms) = streamingFailure("kinesis.streamName" -> missing)
    message should (include(s"stream '$missing'") and include("does not exist") and include("kinesis.streamName"))
    ms should be < Bound
  }

  test("Given a DynamoDB endpoint that refuses connections, when a streaming query with the DynamoDB store starts, " +
    "then it fails within 15 s naming kinesis.dynamodb.endpointUrl and its value") {
    val stream = TestStreams.createStream("it-ddb-unreachable", shards = 1)
    val endpoint = s"http://127.0.0.1:${closedPort()}"
    val (message, ms) = streamingFailure(
      "kinesis.streamName" -> stream,
      "kinesis.metadataCommitterType" -> "DYNAMODB",
      "kinesis.dynamodb.tableName" -> "it-unreachable-metadata",
      "kinesis.dynamodb.endpointUrl" -> endpoint)
    message should (include(s"Cannot reach DynamoDB at $endpoint (option kinesis.dynamodb.endpointUrl)") and
      include("connection was refused"))
    ms should be < Bound
  }

  test("Given a closed port or a missing stream, when a batch is written, then the write fails within 15 s saying " +
    "which") {
    val session = spark
    import session.implicits._
    val rows = Seq(("k", "v")).toDF("partitionKey", "data")
    val endpoint = s"https://127.0.0.1:${closedPort()}"
    val (unreachable, unreachableMs) = failureOf(rows.write.format("aws-kinesis")
      .options(SinkHarness.sinkOptions(Some("it-unreachable"), "kinesis.endpointUrl" -> endpoint)).save())
    unreachable should (include(s"Cannot reach Kinesis at $endpoint") and include("stream 'it-unreachable'"))
    unreachableMs should be < Bound

    val missing = s"it-missing-sink-${java.util.UUID.randomUUID().toString.take(8)}"
    val (absent, absentMs) = failureOf(rows.write.format("aws-kinesis")
      .options(SinkHarness.sinkOptions(Some(missing))).save())
    absent should (include(s"stream '$missing'") and include("does not exist"))
    absentMs should be < Bound
  }
}
