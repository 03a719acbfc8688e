package io.github.sparkkinesis.payloads

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckFailure
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.functions.{col, expr}

import io.github.sparkkinesis.payloads.functions.cloudwatch_logs

/** cloudwatch_logs on subscription records in the format AWS documents for Kinesis destinations. */
class CloudWatchLogsSuite extends PayloadSuiteBase {

  /** A data message as a subscription filter writes it to the stream (before compression). */
  private val dataMessage =
    """{"messageType":"DATA_MESSAGE","owner":"111122223333","logGroup":"/aws/lambda/checkout",
      |"logStream":"2026/11/27/[$LATEST]abc","subscriptionFilters":["to-kinesis"],
      |"logEvents":[
      |{"id":"37845291736471280196518355412011519358117625702014631936","timestamp":1764201600123,
      |"message":"START RequestId: 1"},
      |{"id":"37845291736471280196518355412011519358117625702014631937","timestamp":1764201600456,
      |"message":"{\"level\":\"ERROR\",\"msg\":\"café\"}"}]}""".stripMargin

  /** The message CloudWatch Logs sends to check the destination is reachable. */
  private val controlMessage =
    """{"messageType":"CONTROL_MESSAGE","owner":"CloudwatchLogs","logGroup":"","logStream":"",
      |"subscriptionFilters":[],"logEvents":[{"id":"","timestamp":1764201600000,
      |"message":"CWL CONTROL MESSAGE: Checking health of destination Kinesis stream."}]}""".stripMargin

  test("Given a gzip-compressed data message, when decoded, then its fields and every log event are read") {
    val decoded = records(gzip(utf8(dataMessage))).select(cloudwatch_logs(col("data")).as("logs"))
    // Timestamps stay in Spark (as unix_millis): this suite's classpath cannot build java.sql.Timestamps on Spark 3.5.
    val message = decoded.select("logs.*").drop("logEvents").head()
    message.getAs[String]("messageType") shouldBe "DATA_MESSAGE"
    message.getAs[String]("owner") shouldBe "111122223333"
    message.getAs[String]("logGroup") shouldBe "/aws/lambda/checkout"
    message.getAs[String]("logStream") shouldBe "2026/11/27/[$LATEST]abc"
    message.getAs[Seq[String]]("subscriptionFilters") shouldBe Seq("to-kinesis")
    message.getAs[String]("error") shouldBe null

    // One row per event is the docs' explode; here the events are read as an array, so that the query stays on the
    // driver (the connector's test classpath cannot run Spark 3.5 jobs: its Jackson is newer than Spark's).
    val events = decoded
      .select(expr("transform(logs.logEvents, e -> struct(e.id, unix_millis(e.timestamp), e.message))"))
      .head().getSeq[Row](0).map(r => (r.getString(0), r.getLong(1), r.getString(2)))
    events shouldBe Seq(
      ("37845291736471280196518355412011519358117625702014631936", 1764201600123L, "START RequestId: 1"),
      (
        "37845291736471280196518355412011519358117625702014631937",
        1764201600456L,
        """{"level":"ERROR","msg":"café"}"""))
  }

  test("Given control and data messages, compressed or not, when filtered on messageType, then control ones go") {
    val decoded = records(gzip(utf8(controlMessage)), utf8(dataMessage), utf8(controlMessage))
      .select(cloudwatch_logs(col("data")).as("logs"))
    decoded.select("logs.messageType").collect().map(_.getString(0)) shouldBe
      Array("CONTROL_MESSAGE", "DATA_MESSAGE", "CONTROL_MESSAGE")
    decoded.where(col("logs.messageType") === "DATA_MESSAGE").select(expr("size(logs.logEvents)"))
      .collect().map(_.getInt(0)) shouldBe Array(2)
  }

  private val malformed = Seq(
    "bytes that are neither gzip nor JSON" ->
      (Array[Byte](1, 2, 3) -> "neither gzip-compressed (it starts with bytes 01 02 03) nor JSON"),
    "a truncated gzip stream" -> (gzip(utf8(dataMessage)).dropRight(
      20) -> "the compressed data is corrupt or truncated"),
    "gzip of text that is not JSON" -> (gzip(utf8("not json")) -> "the JSON is malformed"),
    "a message without messageType" -> (utf8("""{"owner":"1","logEvents":[]}""") -> "messageType is missing"),
    "a timestamp that is not an integer" ->
      (utf8(dataMessage.replace("1764201600123", "\"yesterday\"")) ->
        "a log event's timestamp is the string 'yesterday', not a 64-bit integer"),
    "a JSON array" -> (utf8("""[{"messageType":"DATA_MESSAGE"}]""") -> "the message is not a JSON object"),
    "two messages in one record" -> (utf8(controlMessage + controlMessage) -> "the record has more after"))

  test("Given malformed records, when decoded PERMISSIVE, then each gives only the reason in error") {
    val payloads = malformed.map(_._2._1)
    val decoded = records(payloads: _*).select(cloudwatch_logs(col("data")).as("logs"))
      .select(col("logs.*"), col("logs.logEvents").isNull.as("noEvents")).drop("logEvents").collect()
    assertMalformed(decoded.toSeq, malformed) { row =>
      row.getAs[String]("messageType") shouldBe null
      row.getAs[Boolean]("noEvents") shouldBe true
    }
  }

  test("Given a malformed record, when decoded FAILFAST, then the query fails with the reason; null stays null") {
    failureOf(records(Array[Byte](1, 2, 3)).select(cloudwatch_logs(col("data"), "FAILFAST")).collect()) should
      include("cloudwatch_logs: the record is neither gzip-compressed (it starts with bytes 01 02 03) nor JSON")
    records(null: Array[Byte]).select(cloudwatch_logs(col("data"), "failfast")).head().isNullAt(0) shouldBe true
  }

  test("Given a mode that is neither PERMISSIVE nor FAILFAST or a string column, then the query is refused") {
    the[IllegalArgumentException] thrownBy cloudwatch_logs(col("data"), "DROPMALFORMED") should have message
      "cloudwatch_logs: mode 'DROPMALFORMED' is not one of PERMISSIVE (null, and the reason where the result has " +
      "an error field) or FAILFAST (fail the task); pass one of them"
    // Checked on the expression: an AnalysisException needs Spark's Jackson, which this suite's classpath lacks.
    CloudWatchLogs(Literal("text"), PayloadMode.Permissive).checkInputDataTypes() shouldBe TypeCheckFailure(
      "cloudwatch_logs takes a binary column (such as the source's data), not string: pass the binary column, or " +
        "cast a string column to binary")
  }
}
