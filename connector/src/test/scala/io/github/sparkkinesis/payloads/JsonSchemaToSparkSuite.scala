package io.github.sparkkinesis.payloads

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The reader JSON Schema's Spark type: each construct's mapping, and what is refused with the reason. */
class JsonSchemaToSparkSuite extends AnyFunSuite with Matchers {

  private def sparkType(properties: String, extra: String = ""): StructType =
    JsonSchemaToSpark.reader(s"""{"type": "object", "properties": {$properties}$extra}""").sparkType

  private def refusal(definition: String): String =
    intercept[IllegalArgumentException](JsonSchemaToSpark.reader(definition)).getMessage

  test("Given a schema of every type, then each property maps to its Spark type, in the schema's order") {
    sparkType(
      """"s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
        |"z": {"type": "null"}, "ts": {"type": "string", "format": "date-time"},
        |"d": {"type": "string", "format": "date"}, "e": {"type": "string", "format": "email"},
        |"nullable": {"type": ["integer", "null"]}, "wide": {"type": ["integer", "number"]},
        |"tags": {"type": "array", "items": {"type": "string"}}, "untypedItems": {"type": "array"},
        |"nested": {"type": "object", "properties": {"x": {"type": "integer"}}},
        |"counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        |"free": {"type": "object"}, "anything": {}, "alsoAnything": true""".stripMargin) shouldBe StructType(Seq(
      StructField("s", StringType),
      StructField("i", LongType),
      StructField("n", DoubleType),
      StructField("b", BooleanType),
      StructField("z", NullType),
      StructField("ts", TimestampType),
      StructField("d", DateType),
      StructField("e", StringType),
      StructField("nullable", LongType),
      StructField("wide", DoubleType),
      StructField("tags", ArrayType(StringType)),
      StructField("untypedItems", ArrayType(StringType)),
      StructField("nested", StructType(Seq(StructField("x", LongType)))),
      StructField("counts", MapType(StringType, LongType)),
      StructField("free", MapType(StringType, StringType)),
      StructField("anything", StringType),
      StructField("alsoAnything", StringType)))
  }

  test("Given untyped schemas, then their type is inferred from properties, items, enum and const") {
    sparkType(
      """"o": {"properties": {"a": {"type": "boolean"}}}, "a": {"items": {"type": "number"}},
        |"e": {"enum": ["red", "green"]}, "k": {"enum": [1, 2, null]}, "c": {"const": true}""".stripMargin) shouldBe
      StructType(Seq(
        StructField("o", StructType(Seq(StructField("a", BooleanType)))),
        StructField("a", ArrayType(DoubleType)),
        StructField("e", StringType),
        StructField("k", LongType),
        StructField("c", BooleanType)))
  }

  test("Given $refs to definitions and $defs, and oneOf/anyOf of one type and null, then they are followed") {
    sparkType(
      """"a": {"$ref": "#/definitions/money"}, "b": {"$ref": "#/$defs/code"},
        |"c": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/money"}]},
        |"d": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^x"}]},
        |"e": {"allOf": [{"type": "integer"}]}""".stripMargin,
      """, "definitions": {"money": {"type": "number"}}, "$defs": {"code": {"type": "string"}}""") shouldBe
      StructType(Seq(
        StructField("a", DoubleType),
        StructField("b", StringType),
        StructField("c", DoubleType),
        StructField("d", StringType),
        StructField("e", LongType)))
  }

  test("Given what has no single Spark type, then the reader is refused naming where and why") {
    def props(p: String) = s"""{"type": "object", "properties": {$p}}"""
    refusal(props(""""x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}""")) should
      (include("field x is oneOf of string, bigint") and include("no common Spark type"))
    refusal(props(""""x": {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "array"}]}""")) should
      include("field x is anyOf of")
    refusal(props(""""x": {"type": ["string", "integer"]}""")) should
      include("field x may be any of string, integer, which have no common Spark type")
    refusal(props(""""x": {"allOf": [{"type": "object"}, {"required": ["a"]}]}""")) should
      include("field x combines 2 schemas with allOf")
    refusal(props(""""x": {"type": "array", "items": [{"type": "string"}]}""")) should include("field x is a tuple")
    refusal(props(""""x": {"$ref": "other.json#/a"}""")) should
      include("only references within the schema (#/...) are followed")
    refusal(props(""""x": {"$ref": "#/definitions/none"}""")) should include("which the schema does not have")
    refusal("""{"type": "object", "definitions": {"node": {"type": "object", "properties":
      |{"next": {"$ref": "#/definitions/node"}}}}, "properties": {"head": {"$ref": "#/definitions/node"}}}"""
      .stripMargin) should include("field head.next refers to '#/definitions/node' within itself: a recursive schema")
    refusal(props(""""x": {"type": "decimal"}""")) should include("field x has type 'decimal'")
    refusal(props(""""x": false""")) should include("field x has schema false")
    refusal(props(""""x": {"enum": [{"a": 1}]}""")) should include("only strings, numbers, booleans and null")
    refusal("""{"type": "array"}""") should include("the record is array<string>: it must be an object with properties")
    refusal("""{"type": "object"}""") should include("the record is map<string,string>")
    refusal("not json") should include("it is not JSON")
    refusal("[1]") should include("it is not a JSON object")
  }
}
