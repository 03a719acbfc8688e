package io.github.sparkkinesis.it

import java.time.Instant

import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** spark.read of a bounded range, with each kind of kinesis.endingPosition, against the emulator. */
class BatchReadSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private def read(stream: String, options: (String, String)*): DataFrame = {
    val base = SparkHarness.kinesisOptions(stream, "TRIM_HORIZON") - "kinesis.startingPosition"
    spark.read.format("aws-kinesis").options(base ++ options).load()
  }

  private def payloads(df: DataFrame): Seq[String] =
    df.collect().toSeq.map(r => new String(r.getAs[Array[Byte]]("data"), "UTF-8"))

  test("spark.read without positions reads from the trim horizon to the records there when it is planned, across " +
    "a split, each record once, and counting twice gives the same answer") {
    val stream = TestStreams.createStream("it-batch", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("b", n = 40, keys = 8))
    TestStreams.splitShard(stream, TestStreams.openShards(stream).head.shardId())
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("a", n = 30, keys = 6))
    val df = read(stream)
    RecordChecks.assertExactlyOnce((before ++ after).map(_.payload), payloads(df), "batch read")
    df.count() shouldBe 70
  }

  test("spark.read with an AT_TIMESTAMP ending position stops before that instant; with a per-shard map at the " +
    "records it names") {
    val stream = TestStreams.createStream("it-batch-end", shards = 1)
    val early = TestStreams.putStrings(stream, TestStreams.testRecords("e", n = 10, keys = 2))
    Thread.sleep(1100) // the emulator's arrival times have second precision: keep the two groups a second apart
    val boundary = Instant.now()
    Thread.sleep(1100)
    val late = TestStreams.putStrings(stream, TestStreams.testRecords("l", n = 10, keys = 2))
    payloads(read(stream, "kinesis.endingPosition" -> s"AT_TIMESTAMP $boundary")) should
      contain theSameElementsAs early.map(_.payload)
    val shard = early.head.shardId
    val ending =
      s"""{"$shard": {"iteratorType": "AFTER_SEQUENCE_NUMBER", "iteratorPosition": "${late(3).sequenceNumber}"}}"""
    payloads(read(stream, "kinesis.endingPosition" -> ending)) should
      contain theSameElementsAs (early ++ late.take(4)).map(_.payload)
  }

  test("a streaming query given kinesis.endingPosition fails at start, saying it is for batch reads") {
    val stream = TestStreams.createStream("it-batch-refused", shards = 1)
    val df = readKinesis(stream, "TRIM_HORIZON", "kinesis.endingPosition" -> "LATEST")
    val error = intercept[Exception](startCollecting(df)._1.processAllAvailable())
    Iterator.iterate[Throwable](error)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ") should
      include("kinesis.endingPosition is for batch reads")
  }
}
