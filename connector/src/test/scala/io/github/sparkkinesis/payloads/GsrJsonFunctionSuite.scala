package io.github.sparkkinesis.payloads

import java.util.UUID

import org.apache.spark.sql.functions.{col, lit, struct}

import io.github.sparkkinesis.payloads.GsrJsonTestData._
import io.github.sparkkinesis.payloads.functions.from_glue_schema_registry

/**
 * `from_glue_schema_registry` on JSON frames in a Spark query, per mode: the registry's versions are put in the
 * executor's version cache beforehand (as a first fetch would), so the queries make no registry call.
 */
class GsrJsonFunctionSuite extends PayloadSuiteBase {

  private val unknown = UUID.fromString("11111111-2222-3333-4444-555555555555")

  /**
   * Options naming a registry of their own, whose versions 1, 2 and (not found, for 5 s) `unknown` are cached already.
   */
  private def options(extra: (String, String)*): Map[String, String] = {
    val registry = Map(
      "kinesis.region" -> "us-east-1",
      "kinesis.awsAccessKeyId" -> "test",
      "kinesis.awsSecretKey" -> "test",
      "kinesis.glue.endpointUrl" -> s"http://registry-${UUID.randomUUID}")
    val target = new GsrOptions("test", registry, Seq.empty).target
    Seq(Version1, Version2).foreach(v => SchemaVersionCache.shared.get(target, v.id, _ => v))
    SchemaVersionCache.shared.get(
      target,
      unknown,
      id => throw new SchemaVersionNotFound(s"schema version $id is not there"))
    registry ++ Map(GsrOptions.JsonSchema -> V2) ++ extra
  }

  private val good = Seq(
    GsrFrame.write(V1Id, utf8("""{"id": "a", "amount": 7, "note": "gift"}"""), zlib = true),
    GsrFrame.write(
      V2Id,
      utf8("""{"id": "b", "amount": 2.5, "currency": "EUR", "lines": [{"sku": "s", "qty": 3}]}"""),
      zlib = false))

  test("Given good and bad records, when decoded PERMISSIVE with errorColumn, then the good give their fields and " +
    "each bad one null fields and its reason; without errorColumn a bad record is null") {
    val bad = Seq(
      "type" -> (
        GsrFrame.write(V2Id, utf8("""{"id": "c", "amount": "12"}"""), zlib = false),
        "field amount is the string '12', not a number"),
      "not json" -> (GsrFrame.write(V1Id, utf8("""{"id": """), zlib = false), s"schema version $V1Id is not JSON"),
      // Not found is remembered for 5 s only; a slow run may ask the (unreachable) registry again: either says so.
      "unknown" -> (GsrFrame.write(unknown, utf8("{}"), zlib = false), s"schema version $unknown "),
      "header" -> (Array[Byte](9, 0, 1), "at least 18 bytes"))
    val rows = records(good ++ bad.map(_._2._1): _*)
      .select(from_glue_schema_registry(col("data"), "shop", "orders", options("errorColumn" -> "error")).as("o"))
      .select("o.*").collect().toSeq
    rows.head.schema.fieldNames.toSeq shouldBe Seq("id", "amount", "currency", "placed", "lines", "error")
    rows.take(2).map(r => (r.getString(0), r.getDouble(1), r.getString(2), r.getString(5))) shouldBe
      Seq(("a", 7.0, null, null), ("b", 2.5, "EUR", null))
    rows(1).getSeq[org.apache.spark.sql.Row](4).map(l => (l.getString(0), l.getLong(1))) shouldBe Seq(("s", 3L))
    assertMalformed(rows.drop(2), bad)(row => (0 until 5).foreach(i => row.isNullAt(i) shouldBe true))

    records(bad.head._2._1).select(from_glue_schema_registry(col("data"), "shop", "orders", options()).as("o"))
      .collect().map(_.isNullAt(0)).toSeq shouldBe Seq(true)
  }

  test("Given a record of the wrong type, when decoded FAILFAST, then the task fails naming the version, the " +
    "record's position, the field and the mode") {
    val record = GsrFrame.write(V2Id, utf8("""{"id": "c", "lines": [{"qty": "x"}]}"""), zlib = false)
    val failure = failureOf(
      records(good :+ record: _*)
        .select(struct(col("data"), lit("shardId-000000000001").as("shardId"), lit("4960").as("sequenceNumber"))
          .as("r"))
        .select(from_glue_schema_registry(col("r"), "shop", "orders", options("mode" -> "FAILFAST")))
        .collect())
    failure should (include(s"of schema version $V2Id") and include("sequence number 4960 of shard " +
      "shardId-000000000001") and include("field lines[].qty is the string 'x', not an integer") and
      include("mode FAILFAST"))
  }

  test("Given a reader JSON Schema Spark cannot type, or an errorColumn that is one of its fields, or both reader " +
    "schema options, then the function refuses when called, naming the schema and why") {
    val untypeable = """{"type": "object", "properties": {"x": {"type": ["string", "integer"]}}}"""
    val refused = options(GsrOptions.JsonSchema -> untypeable)
    failureOf(from_glue_schema_registry(col("data"), "shop", "orders", refused)) should
      (include("the reader schema of 'orders' (registry 'shop')") and include("field x may be any of"))
    failureOf(from_glue_schema_registry(col("data"), "shop", "orders", options("errorColumn" -> "currency"))) should
      include("option errorColumn 'currency' is a field of the reader schema")
    failureOf(from_glue_schema_registry(
      col("data"),
      "shop",
      "orders",
      options(GsrOptions.AvroSchema -> GsrTestData.V1.toString))) should
      include("options avroSchema and jsonSchema are both set")
  }
}
