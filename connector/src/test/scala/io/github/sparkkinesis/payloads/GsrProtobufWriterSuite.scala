package io.github.sparkkinesis.payloads

import java.math.{BigDecimal => JBigDecimal}
import java.time.{Duration, Instant}
import java.util.UUID

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.{TypeCheckFailure, TypeCheckSuccess}
import org.apache.spark.sql.catalyst.expressions.{CreateArray, CreateNamedStruct, Expression, Literal}
import org.apache.spark.sql.functions.{col, struct}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.payloads.GsrProtobufTestData.AllTypes
import io.github.sparkkinesis.payloads.GsrTestData.Registry
import io.github.sparkkinesis.payloads.functions.to_glue_schema_registry

/**
 * `to_glue_schema_registry`'s Protobuf writer: rows written as GSR Protobuf payloads (message index, message) and read
 * back by the decoder of `from_glue_schema_registry`, every type and two versions; structs that do not fit the message
 * refused when the query is analysed; values that cannot be written failing the row, naming the field.
 */
class GsrProtobufWriterSuite extends AnyFunSuite with Matchers {

  /** Timestamps as Instant: java.sql.Timestamp's calendar rebasing (and its Jackson) is not what is tested here. */
  private val java8Times = {
    val conf = new SQLConf()
    conf.setConfString(SQLConf.DATETIME_JAVA8API_ENABLED.key, "true")
    conf
  }

  /**
   * `row` (external values, of `definition`'s reader type) written and read back by the decoder, as external values.
   */
  private def roundTrip(definition: String, row: Row, message: Option[String] = None, zlib: Boolean = false): Row =
    roundTrip(definition, definition, row, message)(zlib)

  private def roundTrip(writerDefinition: String, readerDefinition: String, row: Row, message: Option[String])(
      zlib: Boolean): Row = {
    val writer = new ProtobufWriter(writerDefinition, message)
    val written = SparkToProtobuf.converter(writer.message, row.schema)(internal(row))
    val version = SchemaVersion(UUID.randomUUID(), writerDefinition, "PROTOBUF")
    val reader = new ProtobufReader(readerDefinition, message)
    val decoded = new GsrProtobufDecoder(GsrTestData.Target, reader, new Registry(version).lookup)
      .decode(GsrFrame.write(version.id, writer.payload(written), zlib)).fold(f => fail(f.reason), identity)
    SQLConf.withExistingConf(java8Times)(
      CatalystTypeConverters.createToScalaConverter(reader.sparkType)(decoded).asInstanceOf[Row])
  }

  private def internal(row: Row): InternalRow = SQLConf.withExistingConf(java8Times)(
    CatalystTypeConverters.createToCatalystConverter(row.schema)(row).asInstanceOf[InternalRow])

  private def row(schema: StructType, values: Any*): Row =
    new org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema(values.toArray, schema)

  private lazy val allType = new ProtobufReader(AllTypes, None).sparkType

  test("Given a row of every protobuf type, when written and read back by from_glue_schema_registry's decoder, then " +
    "every value is the one written: unsigned extremes, negative durations, times before 1970, open enum numbers") {
    val inner = allType("one").dataType.asInstanceOf[StructType]
    val written = row(
      allType,
      -1,
      Int.MinValue,
      -3,
      4294967295L,
      0L,
      Long.MinValue,
      Long.MaxValue,
      -6L,
      new JBigDecimal("18446744073709551615"),
      new JBigDecimal("42"),
      1.5f,
      Double.MinPositiveValue,
      true,
      "é ✓",
      Array[Byte](0, 1, -1),
      "SOME",
      "7",
      Duration.ofSeconds(-2).plusNanos(500000000L - 1000L),
      Instant.parse("1969-12-31T23:59:59.999999Z"),
      9L,
      null,
      null,
      3,
      Map(1 -> row(inner, true, Seq("x")), 2 -> row(inner, false, Seq.empty)),
      Map("k" -> "", "" -> "v"),
      Seq(1L, -2L),
      Seq(row(inner, false, Seq.empty), row(inner, true, Seq("a", "b"))),
      "",
      row(inner, true, Seq.empty))
    val back = roundTrip(AllTypes, written, zlib = true)
    back.schema shouldBe allType
    (0 until allType.size).foreach { i =>
      withClue(allType(i).name)((back.get(i), written.get(i)) match {
        case (a: Array[Byte], b: Array[Byte]) => a.toSeq shouldBe b.toSeq
        case (a, b) => a shouldBe b
      })
    }
  }

  test("Given nulls, when written, then each is an absent field: null again where the field has presence (messages, " +
    "wrappers, optional, oneof), the field's default where proto3 gives it none") {
    val nulls = row(allType, Seq.fill(allType.size)(null): _*)
    val back = roundTrip(AllTypes, nulls)
    val byName = allType.fieldNames.zip(back.toSeq).toMap
    allType.fieldNames.filter(n => byName(n) != null).toSet shouldBe
      Set(
        "i32",
        "s32",
        "sf32",
        "u32",
        "f32",
        "i64",
        "s64",
        "sf64",
        "u64",
        "f64",
        "f",
        "d",
        "b",
        "s",
        "raw",
        "kind",
        "unknown_kind",
        "inner_by_id",
        "tags",
        "packed",
        "inners")
    (byName("i32"), byName("s"), byName("kind"), byName("packed")) shouldBe (0, "", "NONE", Seq.empty)
  }

  private val v1 =
    """syntax = "proto3";
      |package shop;
      |message Order { string id = 1; int32 amount = 2; string note = 3; Status status = 4;
      |  enum Status { NEW = 0; PAID = 1; } }""".stripMargin
  private val v2 =
    """syntax = "proto3";
      |package shop;
      |message Order { string id = 1; int64 amount = 2; optional string currency = 5; Status status = 4;
      |  enum Status { NEW = 0; PAID = 1; REFUNDED = 2; } }
      |message Refund { string order_id = 1; repeated Order orders = 2; }""".stripMargin

  test("Given a row written with version 1, when read with version 2, then fields match by number: amount widened, " +
    "note dropped, currency null; a second message of a version is written with its own index") {
    val orderV1 = new ProtobufReader(v1, None).sparkType
    roundTrip(v1, v2, row(orderV1, "a", -7, "gift", "PAID"), None)(zlib = false).toSeq shouldBe
      Seq("a", -7L, null, "PAID")
    val refundType = new ProtobufReader(v2, Some("Refund")).sparkType
    val orderV2 = new ProtobufReader(v2, None).sparkType
    val refund = row(refundType, "r-1", Seq(row(orderV2, "b", 1L << 40, "EUR", "REFUNDED")))
    new ProtobufWriter(v2, Some("Refund")).index shouldBe 1
    roundTrip(v2, refund, Some("shop.Refund")) shouldBe refund
  }

  private def options(extra: (String, String)*): Map[String, String] = Map(
    "kinesis.region" -> "us-east-1",
    "kinesis.awsAccessKeyId" -> "test",
    "kinesis.awsSecretKey" -> "test",
    // Never reached: each refusal comes before the first call.
    "kinesis.glue.endpointUrl" -> "http://127.0.0.1:1",
    GsrOptions.ProtobufSchema -> v2) ++ extra

  /**
   * Why to_glue_schema_registry of a struct of `fields` does not pass analysis (checked on the expression, as analysis
   * does: an AnalysisException needs Spark's Jackson, which this suite's classpath lacks).
   */
  private def refusal(fields: (String, Expression)*)(extra: (String, String)*): String =
    PayloadExpressions.toGlueSchemaRegistry(named(fields: _*), "shop", "orders", options(extra: _*))
      .checkInputDataTypes() match {
      case TypeCheckFailure(message) => message
      case other => fail(s"analysed: $other")
    }

  private def named(fields: (String, Expression)*): Expression =
    CreateNamedStruct(fields.flatMap { case (name, value) => Seq(Literal(name), value) })

  test("Given a struct that does not fit the message, when the query is analysed, then it is refused naming the " +
    "field and both types: an unknown field, a type of another kind, a nested mismatch, a required field missing") {
    refusal("id" -> Literal("a"), "amount" -> Literal(1), "qty" -> Literal(2))() shouldBe "to_glue_schema_registry " +
      "cannot write the struct as protobuf message shop.Order: struct field qty (int) is not a field of protobuf " +
      "message shop.Order, whose fields are id, amount, currency, status"
    refusal("id" -> Literal("a"), "amount" -> Literal("7"))() should include("struct field amount is string, and " +
      "protobuf field amount of shop.Order is int64 (it reads back as bigint): it cannot be written from string")
    refusal("order_id" -> Literal("r"), "orders" -> CreateArray(Seq(named("amount" -> Literal(1.5)))))(
      GsrOptions.ProtobufMessage -> "Refund") should include(
      "struct field orders.amount is double, and protobuf field amount of shop.Order is int64")
    val proto2 = "syntax = \"proto2\"; message Reading { required string sensor = 1; optional int32 level = 2; }"
    refusal("level" -> Literal(1))(GsrOptions.ProtobufSchema -> proto2) should include(
      "protobuf field sensor (string) of Reading is required, and the struct has no field of that name")
    // An int into int64, the other fields absent: fits.
    PayloadExpressions.toGlueSchemaRegistry(
      named("id" -> Literal("a"), "amount" -> Literal(7)),
      "shop",
      "orders",
      options()).checkInputDataTypes() shouldBe TypeCheckSuccess
  }

  test("Given values that cannot be written, when a row is written, then it fails naming the field and the value: " +
    "an enum name the enum lacks, a number for a closed enum, unsigned out of range, null in a repeated field or as " +
    "a map value, two members of one oneof, a null required field") {
    def failure(definition: String, values: (String, DataType, Any)*): String = {
      val schema = StructType(values.map { case (name, t, _) => StructField(name, t) })
      val writer = new ProtobufWriter(definition, None)
      intercept[IllegalArgumentException](
        SparkToProtobuf.converter(writer.message, schema)(internal(row(schema, values.map(_._3): _*)))).getMessage
    }
    failure(v2, ("status", StringType, "LOST")) shouldBe "to_glue_schema_registry cannot write field status as " +
      "protobuf: 'LOST' is not a value of enum shop.Order.Status, whose values are NEW, PAID, REFUNDED"
    val proto2 = "syntax = \"proto2\"; message R { required string id = 1; optional Kind kind = 2; " +
      "optional uint32 count = 3; optional uint64 total = 4; enum Kind { A = 1; } }"
    failure(proto2, ("id", StringType, "x"), ("kind", StringType, "2")) should include(
      "field kind as protobuf: '2' is not a value of enum R.Kind, whose values are A")
    failure(proto2, ("id", StringType, null)) should include("field id as protobuf: it is null, and the field is " +
      "required")
    failure(proto2, ("id", StringType, "x"), ("count", LongType, 1L << 32)) should include(
      "field count as protobuf: 4294967296 is out of the range of protobuf uint32 (0 to 4294967295)")
    failure(proto2, ("id", StringType, "x"), ("total", DecimalType(20, 0), new JBigDecimal("-1"))) should include(
      "field total as protobuf: -1 is not a whole number from 0 to 18446744073709551615")
    failure(AllTypes, ("packed", ArrayType(LongType), Seq(1L, null))) should include(
      "field packed as protobuf: element 1 is null, and a repeated protobuf field cannot hold null")
    failure(AllTypes, ("tags", MapType(StringType, StringType), Map("k" -> null))) should include(
      "field tags as protobuf: the value of key k is null, and a protobuf map cannot hold null")
    val inner = allType("one").dataType
    failure(AllTypes, ("inner_by_id", MapType(IntegerType, inner), Map(1 -> null))) should include(
      "field inner_by_id as protobuf: the value of key 1 is null, and a protobuf map cannot hold null")
    failure(AllTypes, ("name", StringType, "n"), ("number", IntegerType, 1)) should include(
      "field number as protobuf: it and name are both set, and they are members of oneof choice")
  }

  test("Given protobuf options that cannot be used, when to_glue_schema_registry is called, then it refuses: " +
    "protobufMessage without protobufSchema, a message the definition lacks, a definition that does not parse, " +
    "two writer schemas") {
    def refused(options: Map[String, String]): String =
      intercept[IllegalArgumentException](to_glue_schema_registry(struct(col("id")), "shop", "orders", options))
        .getMessage
    refused(options(GsrOptions.ProtobufMessage -> "Order") - GsrOptions.ProtobufSchema) should include(
      "option protobufMessage names a message of the Protobuf writer schema; give that schema as option protobufSchema")
    refused(options(GsrOptions.ProtobufMessage -> "Invoice")) should include(
      "the definition has no message 'Invoice'; its messages are shop.Order, shop.Refund")
    refused(options(GsrOptions.ProtobufSchema -> "message {")) should include(
      "to_glue_schema_registry: option protobufSchema is not a valid .proto definition: line 1: expected a name")
    refused(options(GsrOptions.AvroSchema -> GsrTestData.V1.toString)) should include(
      "options avroSchema and protobufSchema are both set; give the writer schema in the one of its data format")
  }
}
