package io.github.sparkkinesis.it

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.GZIPOutputStream

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, explode}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.payloads.functions.{cloudwatch_logs, decompress, dynamodb_change}

/** The payload functions from the shaded JAR, on records read from the emulator by a batch query's tasks. */
class PayloadsSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private def gzip(text: String): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val zip = new GZIPOutputStream(out)
    zip.write(text.getBytes(UTF_8))
    zip.close()
    out.toByteArray
  }

  private val logs =
    """{"messageType":"DATA_MESSAGE","owner":"111122223333","logGroup":"app","logStream":"s1",
      |"subscriptionFilters":["f"],"logEvents":[{"id":"1","timestamp":1764201600123,"message":"a"},
      |{"id":"2","timestamp":1764201600456,"message":"b"}]}""".stripMargin
  private val control =
    """{"messageType":"CONTROL_MESSAGE","owner":"CloudwatchLogs","logGroup":"","logStream":"",
      |"subscriptionFilters":[],"logEvents":[{"id":"","timestamp":1764201600000,"message":"check"}]}""".stripMargin
  private val change =
    """{"awsRegion":"eu-west-3","dynamodb":{"ApproximateCreationDateTime":1764201600123,
      |"Keys":{"pk":{"S":"o1"}},"NewImage":{"pk":{"S":"o1"},"qty":{"N":"2"}},
      |"ApproximateCreationDateTimePrecision":"MILLISECOND"},"eventID":"e1","eventName":"INSERT",
      |"tableName":"Orders","eventSource":"aws:dynamodb"}""".stripMargin

  private def read(stream: String): DataFrame =
    spark.read.format("aws-kinesis").options(SparkHarness.kinesisOptions(stream, "TRIM_HORIZON") -
      "kinesis.startingPosition").load()

  test("Given CloudWatch Logs, DynamoDB and zstd records in a stream, when a batch query reads and decodes them, " +
    "then each function gives its rows; FAILFAST fails the task with the reason") {
    val stream = TestStreams.createStream("it-payloads", shards = 1)
    TestStreams.putRecords(
      stream,
      Seq(
        "logs" -> gzip(logs),
        "logs" -> gzip(control),
        "ddb" -> change.getBytes(UTF_8),
        "zstd" -> com.github.luben.zstd.Zstd.compress("compressed".getBytes(UTF_8))))
    val records = read(stream)

    records.where("partitionKey = 'logs'").select(cloudwatch_logs(col("data")).as("logs"))
      .where(col("logs.messageType") === "DATA_MESSAGE")
      .select(col("logs.logGroup"), explode(col("logs.logEvents")).as("event"))
      .selectExpr("logGroup", "event.id", "unix_millis(event.timestamp)", "event.message").collect()
      .map(r => (r.getString(0), r.getString(1), r.getLong(2), r.getString(3))) should contain theSameElementsAs Seq(
      ("app", "1", 1764201600123L, "a"),
      ("app", "2", 1764201600456L, "b"))

    val Array(insert) = records.where("partitionKey = 'ddb'")
      .select(dynamodb_change(col("data"), "pk STRING, qty INT", "FAILFAST").as("c"))
      .selectExpr("c.eventName", "c.newImage.pk", "c.newImage.qty", "unix_micros(c.approximateCreationDateTime)")
      .collect()
    (insert.getString(0), insert.getString(1), insert.getInt(2), insert.getLong(3)) shouldBe
      (("INSERT", "o1", 2, 1764201600123000L))

    records.where("partitionKey = 'zstd'").select(decompress(col("data"), "zstd").cast("string")).head().getString(
      0) shouldBe
      "compressed"

    val failure = intercept[Exception](
      records.select(dynamodb_change(col("data"), "pk STRING, qty INT", "FAILFAST")).collect())
    Iterator.iterate[Throwable](failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ") should
      include("dynamodb_change: the JSON is malformed")
  }
}
