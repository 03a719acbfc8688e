package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.sql.Timestamp
import java.util.UUID

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, lit, struct}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.it.GsrFrames.frame
import io.github.sparkkinesis.payloads.functions.{from_glue_schema_registry, to_glue_schema_registry}

/**
 * The Glue Schema Registry functions on JSON Schema versions, against moto's registry (DataFormat JSON), through the
 * shaded JAR: records of two versions framed by the documented byte layout, zlib frames, bad records per mode, and
 * writing with registration.
 */
class GlueSchemaRegistryJsonSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {
  private val registry = s"it-json-${UUID.randomUUID.toString.take(8)}"
  private lazy val registryCreated = MotoGlue.createRegistry(registry)

  private val v1 =
    """{"type": "object", "properties": {"id": {"type": "string"}, "amount": {"type": "integer"},
      |"note": {"type": ["string", "null"]}}, "required": ["id", "amount"]}""".stripMargin
  private val v2 =
    """{"type": "object", "definitions": {"money": {"type": "number"}}, "properties": {"id": {"type": "string"},
      |"amount": {"$ref": "#/definitions/money"}, "currency": {"type": "string"},
      |"placed": {"type": "string", "format": "date-time"}}, "required": ["id"]}""".stripMargin

  private def options(extra: (String, String)*): Map[String, String] = MotoGlue.functionOptions ++ extra

  private def json(text: String): Array[Byte] = text.getBytes(UTF_8)

  private def binaries(rows: Seq[Array[Byte]]): DataFrame = {
    val session = spark
    import session.implicits._
    rows.toDF("data")
  }

  private def messages(failure: Throwable): String =
    Iterator.iterate[Throwable](failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")

  test("Given records of two JSON versions, some zlib, and bad ones, when decoded with the latest version as reader, " +
    "then version 1's are read by the reader's properties, version 2's as written, and each bad one per mode") {
    registryCreated
    val id1 = MotoGlue.createSchema(registry, "orders", v1, "JSON")
    val id2 = MotoGlue.registerVersion(registry, "orders", v2)
    val avroId = MotoGlue.createSchema(registry, "orders-avro", """{"type": "record", "name": "R", "fields": []}""")
    val records = Seq(
      frame(id1, json("""{"id": "a", "amount": 7, "note": "gift"}""")),
      frame(id1, json("""{"id": "b", "amount": 8, "note": null}"""), zlib = true),
      frame(
        id2,
        json("""{"id": "c", "amount": 2.5, "currency": "USD", "placed": "2026-11-27T07:00:00Z"}"""),
        zlib = true),
      frame(id2, json("""{"id": "d", "amount": "2.5"}""")),
      frame(avroId, Array[Byte](0)),
      frame(id1, json("""{"id": "e", """)))
    val decoded = binaries(records)
      .select(from_glue_schema_registry(col("data"), registry, "orders", options("errorColumn" -> "why")).as("o"))
      .select("o.*")
    decoded.columns.toSeq shouldBe Seq("id", "amount", "currency", "placed", "why")
    val rows = decoded.collect().map(r => (r.getString(0), r.get(1), r.getString(2), r.get(3), r.getString(4))).toSeq
    rows.take(3) shouldBe Seq(
      ("a", 7.0, null, null, null),
      ("b", 8.0, null, null, null),
      ("c", 2.5, "USD", Timestamp.from(java.time.Instant.parse("2026-11-27T07:00:00Z")), null))
    rows.drop(3).map(r => (r._1, r._2, r._3, r._4)).toSet shouldBe Set((null, null, null, null))
    val why = rows.drop(3).map(_._5)
    why(0) should include(s"schema version $id2 does not match the reader schema: field amount is the string '2.5'")
    why(1) should include(s"schema version $avroId is AVRO, and the reader schema is a JSON Schema")
    why(2) should include(s"the payload of schema version $id1 is not JSON")

    val withPosition = binaries(records.slice(3, 4))
      .select(struct(col("data"), lit("shardId-000000000002").as("shardId"), lit("4961").as("sequenceNumber")).as("r"))
    messages(the[Exception] thrownBy withPosition
      .select(from_glue_schema_registry(col("r"), registry, "orders", options("mode" -> "FAILFAST"))).collect()) should
      (include(s"of schema version $id2") and include("sequence number 4961 of shard shardId-000000000002") and
        include("field amount is the string '2.5', not a number"))
  }

  test("Given a struct and a JSON Schema the registry lacks, then to_glue_schema_registry refuses without " +
    "auto_register, registers it (creating the JSON schema) with auto_register, and its frames decode back") {
    registryCreated
    val session = spark
    import session.implicits._
    val placed = Timestamp.from(java.time.Instant.parse("2026-11-27T07:30:00.123456Z"))
    val rows = Seq(("a", 1.5, placed), ("b", 2.0, null)).toDF("id", "amount", "placed")
      .select(struct("id", "amount", "placed").as("s"))
    val write = options("jsonSchema" -> v2)
    messages(the[Exception] thrownBy
      rows.select(to_glue_schema_registry(col("s"), registry, "orders-out", write)).collect()) should
      (include("has no version with the writer's definition") and include("auto_register"))
    val framed = rows.select(to_glue_schema_registry(
      col("s"),
      registry,
      "orders-out",
      write ++ Map("auto_register" -> "true", "compression" -> "zlib")).as("data"))
    framed.collect().foreach(r => r.getAs[Array[Byte]](0)(1) shouldBe 5.toByte)
    val back = framed.select(from_glue_schema_registry(col("data"), registry, "orders-out", options()).as("o"))
      .select("o.id", "o.amount", "o.currency", "o.placed")
    back.collect().map(r => (r.getString(0), r.getDouble(1), r.getString(2), r.get(3))).toSet shouldBe
      Set(("a", 1.5, null, placed), ("b", 2.0, null, null))
  }
}
