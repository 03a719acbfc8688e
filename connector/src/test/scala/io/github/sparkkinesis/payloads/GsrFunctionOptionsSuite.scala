package io.github.sparkkinesis.payloads

import org.apache.spark.sql.functions.col

import io.github.sparkkinesis.payloads.functions.from_glue_schema_registry

/**
 * The reader schema options of from_glue_schema_registry across data formats (the writer's: GsrProtobufWriterSuite),
 * refused when the function is called (no registry is reached: each refusal comes before the first call).
 */
class GsrFunctionOptionsSuite extends PayloadSuiteBase {

  private val registry = Map(
    "kinesis.region" -> "us-east-1",
    "kinesis.awsAccessKeyId" -> "test",
    "kinesis.awsSecretKey" -> "test",
    "kinesis.glue.endpointUrl" -> "http://127.0.0.1:1")

  private val proto = """syntax = "proto3"; package shop; message Order { string id = 1; }"""

  test("Given reader schemas in two or three formats' options, when from_glue_schema_registry is called, then it " +
    "refuses, naming every option set") {
    val avro = GsrOptions.AvroSchema -> GsrTestData.V1.toString
    val json = GsrOptions.JsonSchema -> GsrJsonTestData.V2
    val protobuf = GsrOptions.ProtobufSchema -> proto
    def refusal(options: (String, String)*): String =
      failureOf(from_glue_schema_registry(col("data"), "shop", "orders", registry ++ options))

    refusal(json, protobuf) should include("options jsonSchema and protobufSchema are both set")
    refusal(avro, protobuf) should include("options avroSchema and protobufSchema are both set")
    refusal(avro, json, protobuf) should include("options avroSchema, jsonSchema and protobufSchema are all set")
  }

  test("Given protobufMessage with a JSON reader, when from_glue_schema_registry is called, then it refuses: the " +
    "option is for Protobuf") {
    failureOf(from_glue_schema_registry(
      col("data"),
      "shop",
      "orders",
      registry ++ Map(GsrOptions.JsonSchema -> GsrJsonTestData.V2, GsrOptions.ProtobufMessage -> "shop.Order"))) should
      include("option protobufMessage is for Protobuf schemas; the reader schema of 'orders' is JSON")
  }
}
