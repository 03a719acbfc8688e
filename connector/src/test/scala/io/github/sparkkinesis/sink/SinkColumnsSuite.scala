package io.github.sparkkinesis.sink

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class SinkColumnsSuite extends AnyFunSuite with Matchers {

  private def schema(fields: (String, DataType)*) = StructType(fields.map { case (n, t) => StructField(n, t) })
  private def resolveError(s: StructType, default: Option[String] = Some("s")) =
    intercept[IllegalArgumentException](SinkColumns.resolve(s, default)).getMessage

  test("columns are found by name in any case; other columns are ignored") {
    val c = SinkColumns.resolve(
      schema(
        "extra" -> IntegerType,
        "DATA" -> BinaryType,
        "partitionkey" -> StringType,
        "ExplicitHashKey" -> StringType,
        "streamname" -> StringType),
      None)
    c shouldBe SinkColumns(1, dataIsBinary = true, 2, Some(3), Some(4), None)
  }

  test("a missing or mistyped column fails naming it") {
    resolveError(schema("data" -> StringType)) should (include("no 'partitionKey' column") and include("data"))
    resolveError(schema("partitionKey" -> StringType)) should include("no 'data' column")
    resolveError(schema("data" -> IntegerType, "partitionKey" -> StringType)) should
      (include("'data'") and include("type int") and include("string or binary"))
    resolveError(schema("data" -> StringType, "partitionKey" -> LongType)) should include("'partitionKey'")
    resolveError(schema("data" -> StringType, "partitionKey" -> StringType, "streamName" -> IntegerType), None) should
      include("'streamName'")
    resolveError(schema("data" -> StringType, "Data" -> StringType, "partitionKey" -> StringType)) should
      include("2 columns named 'data'")
  }

  test("without a streamName column, option kinesis.streamName is required") {
    resolveError(schema("data" -> StringType, "partitionKey" -> StringType), None) should
      (include("kinesis.streamName") and include("'streamName'"))
  }

  test("Given option kinesis.streamName, when the schema is resolved, then the streamName column is not looked at") {
    SinkColumns.resolve(
      schema("data" -> StringType, "partitionKey" -> StringType, "streamName" -> IntegerType),
      Some("out")).streamName shouldBe None
  }

  private val sinkSchema = schema(
    "data" -> StringType,
    "partitionKey" -> StringType,
    "explicitHashKey" -> StringType,
    "streamName" -> StringType)
  private val routed = SinkColumns.resolve(sinkSchema, None)
  private val columns = SinkColumns.resolve(sinkSchema, Some("option"))

  private def row(values: Any*) = new GenericInternalRow(values.map {
    case s: String => UTF8String.fromString(s)
    case other => other
  }.toArray[Any])

  test("Given option kinesis.streamName, when a row names another stream, then the option wins (as Kafka's topic)") {
    columns.extract(row("payload", "k", "12", "source-stream")) should matchPattern {
      case OutgoingRecord("option", "k", Some("12"), data) if new String(data, "UTF-8") == "payload" =>
    }
    columns.extract(row("p", "k", null, null)).stream shouldBe "option"
  }

  test("Given no kinesis.streamName, when rows name streams, then each goes to its own; a null one fails the row") {
    routed.extract(row("p", "k", null, "mine")).stream shouldBe "mine"
    intercept[IllegalArgumentException](routed.extract(row("p", "k", null, null))).getMessage should
      include("'streamName' is null and option kinesis.streamName is not set")
  }

  test("values Kinesis would refuse fail the row, naming the column and never echoing the payload") {
    def rowError(values: Any*) = intercept[IllegalArgumentException](columns.extract(row(values: _*))).getMessage
    rowError(null, "k", null, null) should include("column 'data' is null")
    rowError("x" * (10 * 1024 * 1024 + 1), "k", null, null) should (include("10485761 bytes") and not include "xxx")
    rowError("p", null, null, null) should include("'partitionKey' is null")
    rowError("p", "", null, null) should include("'partitionKey' is 0 characters")
    rowError("p", "k" * 257, null, null) should include("257 characters")
    rowError("p", "k", "-1", null) should include("'explicitHashKey' is '-1'")
    rowError("p", "k", (BigInt(1) << 128).toString, null) should include("2^128-1")
  }

  test("Given data of exactly 10 MiB, when the partition key counts too, then the row is refused naming both sizes") {
    val max = "x" * (10 * 1024 * 1024)
    intercept[IllegalArgumentException](columns.extract(row(max, "key\u00e9", null, null))).getMessage should
      (include("10485760 bytes and 'partitionKey' 5") and include("the two together"))
    columns.extract(row(max.drop(5), "key\u00e9", null, null)).size shouldBe 10 * 1024 * 1024
  }
}
