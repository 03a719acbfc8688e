package io.github.sparkkinesis.it

import java.io.ByteArrayOutputStream
import java.util.UUID

import scala.concurrent.duration._

import org.apache.avro.Schema
import org.apache.avro.generic.{GenericData, GenericDatumWriter, GenericRecord}
import org.apache.avro.io.EncoderFactory
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.{coalesce, col, lit, struct, substring_index, when}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.it.GsrFrames.frame
import io.github.sparkkinesis.payloads.functions.{from_glue_schema_registry, to_glue_schema_registry}

/**
 * The Glue Schema Registry functions against moto's registry, through the shaded JAR: records of two schema versions
 * (framed by the documented byte layout, with Spark's own Avro, or hand-encoded Protobuf), zlib frames, every bad input
 * per mode, registration, and end to end through kinesis-mock.
 */
class GlueSchemaRegistrySuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {
  private val registry = s"it-registry-${UUID.randomUUID.toString.take(8)}"

  private val v1 = new Schema.Parser().parse(
    """{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"},
      |{"name":"amount","type":"int"},{"name":"note","type":["null","string"],"default":null}]}""".stripMargin)
  private val v2 = new Schema.Parser().parse(
    """{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"},
      |{"name":"amount","type":"long"},{"name":"currency","type":"string","default":"EUR"}]}""".stripMargin)

  /** Version ids of v1 and v2 of a new schema named `schema` (v2 registered after v1, so v2 is the latest). */
  private def twoVersions(schema: String): (UUID, UUID) =
    (MotoGlue.createSchema(registry, schema, v1.toString), MotoGlue.registerVersion(registry, schema, v2.toString))

  private lazy val registryCreated = MotoGlue.createRegistry(registry)

  private def options(extra: (String, String)*): Map[String, String] = MotoGlue.functionOptions ++ extra

  private def avro(schema: Schema, values: Any*): Array[Byte] = {
    val record = new GenericData.Record(schema)
    values.zipWithIndex.foreach { case (v, i) => record.put(i, v) }
    val out = new ByteArrayOutputStream()
    val encoder = EncoderFactory.get().binaryEncoder(out, null)
    new GenericDatumWriter[GenericRecord](schema).write(record, encoder)
    encoder.flush()
    out.toByteArray
  }

  private def binaries(rows: Seq[Array[Byte]]): DataFrame = {
    val session = spark
    import session.implicits._
    rows.toDF("data")
  }

  test("Given records of two versions, some zlib, when decoded with the latest version as reader, then version 1's " +
    "are resolved (int widened, removed field dropped, added field's default) and version 2's read as written") {
    registryCreated
    val (id1, id2) = twoVersions("orders-evolution")
    val records = Seq(
      frame(id1, avro(v1, "a", 7, "gift")),
      frame(id1, avro(v1, "b", 8, null), zlib = true),
      frame(id2, avro(v2, "c", 1L << 40, "USD"), zlib = true),
      frame(id2, avro(v2, "d", 9L, "GBP")))
    val decoded = binaries(records)
      .select(from_glue_schema_registry(col("data"), registry, "orders-evolution", options()).as("o"))
      .select("o.*")
    decoded.columns.toSeq shouldBe Seq("id", "amount", "currency")
    decoded.collect().map(r => (r.getString(0), r.getLong(1), r.getString(2))).toSet shouldBe
      Set(("a", 7L, "EUR"), ("b", 8L, "EUR"), ("c", 1L << 40, "USD"), ("d", 9L, "GBP"))
  }

  test("Given every kind of bad record, when decoded PERMISSIVE with errorColumn, then each gives null fields and " +
    "its reason, the good record its fields; FAILFAST fails the task naming the version and the record's position") {
    registryCreated
    val (id1, _) = twoVersions("orders-bad")
    val unknown = UUID.randomUUID()
    val good = frame(id1, avro(v1, "ok", 1, null))
    val bad = Seq(
      "short" -> Array[Byte](3, 0, 1),
      "header" -> good.updated(0, 9.toByte),
      "compression" -> good.updated(1, 7.toByte),
      "corrupt zlib" -> good.updated(1, 5.toByte),
      "unknown version" -> frame(unknown, avro(v1, "x", 1, null)),
      "not avro" -> good.dropRight(3),
      "trailing bytes" -> (good :+ 1.toByte))
    val reasons = binaries(good +: bad.map(_._2))
      .select(from_glue_schema_registry(col("data"), registry, "orders-bad", options("errorColumn" -> "why")).as("o"))
      .select("o.*").collect()
    val byId = reasons.map(r => (Option(r.getString(0)), r.getString(3))).toSeq
    byId.head shouldBe (Some("ok"), null)
    byId.tail.map(_._1).toSet shouldBe Set(None)
    val why = byId.tail.map(_._2)
    why(0) should include("at least 18 bytes")
    why(1) should include("the first byte is 9, not 3")
    why(2) should include("compression byte 7")
    why(3) should include("zlib-compressed payload is corrupt")
    why(4) should (include(unknown.toString) and include("EntityNotFoundException"))
    why(5) should include(s"the payload is not Avro of schema version $id1")
    why(6) should include("bytes left after the record")

    val withPosition = binaries(Seq(frame(unknown, avro(v1, "x", 1, null))))
      .select(struct(col("data"), lit("shardId-000000000003").as("shardId"), lit("4955").as("sequenceNumber")).as("r"))
    val failure = the[Exception] thrownBy withPosition
      .select(from_glue_schema_registry(col("r"), registry, "orders-bad", options("mode" -> "FAILFAST"))).collect()
    val message =
      Iterator.iterate[Throwable](failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")
    message should (include(s"of schema version $unknown") and include("sequence number 4955 of shard " +
      "shardId-000000000003") and include("mode FAILFAST"))
  }

  private val orderProtoV1 =
    """syntax = "proto3";
      |package shop;
      |message Order { string id = 1; int32 amount = 2; string note = 3; }""".stripMargin
  private val orderProtoV2 =
    """syntax = "proto3";
      |package shop;
      |message Order { string id = 1; int64 amount = 2; optional string currency = 4; }
      |message Refund { string order_id = 1; }""".stripMargin

  private def protobuf(index: Int, fields: (Int, Any)*): Array[Byte] = ProtobufWire.payload(index, fields: _*)

  test("Given Protobuf records of two versions (DataFormat PROTOBUF), some zlib, when decoded with the latest as " +
    "reader, then fields match by number; PERMISSIVE gives a bad record's reason, FAILFAST fails naming its version; " +
    "to_glue_schema_registry refuses to write Avro into it") {
    registryCreated
    val id1 = MotoGlue.createSchema(registry, "orders-proto", orderProtoV1, "PROTOBUF")
    val id2 = MotoGlue.registerVersion(registry, "orders-proto", orderProtoV2)
    val refund = frame(id2, protobuf(1, 1 -> "o-1"))
    val truncated = frame(id2, protobuf(0, 1 -> "x").dropRight(1))
    val records = Seq(
      frame(id1, protobuf(0, 1 -> "a", 2 -> 7, 3 -> "gift")),
      frame(id1, protobuf(0, 1 -> "b", 2 -> 8), zlib = true),
      frame(id2, protobuf(0, 1 -> "c", 2 -> (1L << 40), 4 -> "USD"), zlib = true),
      refund,
      truncated)
    val decoded = binaries(records)
      .select(from_glue_schema_registry(col("data"), registry, "orders-proto", options("errorColumn" -> "why")).as("o"))
      .select("o.*")
    decoded.columns.toSeq shouldBe Seq("id", "amount", "currency", "why")
    val rows = decoded.collect().map(r =>
      (Option(r.getString(0)), Option(r.get(1)), Option(r.getString(2)), Option(r.getString(3))))
    rows.take(3).toSeq shouldBe Seq(
      (Some("a"), Some(7L), None, None),
      (Some("b"), Some(8L), None, None),
      (Some("c"), Some(1L << 40), Some("USD"), None))
    rows(3) shouldBe (None, None, None, Some("the record is message shop.Refund, not the reader's shop.Order"))
    rows(4)._4.get should include(s"the payload is not a Protobuf shop.Order of schema version $id2")

    val failure = the[Exception] thrownBy binaries(Seq(refund))
      .select(from_glue_schema_registry(col("data"), registry, "orders-proto", options("mode" -> "FAILFAST")))
      .collect()
    Iterator.iterate[Throwable](failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ") should
      (include(s"of schema version $id2") and include("shop.Refund") and include("mode FAILFAST"))

    val session = spark
    import session.implicits._
    val writing = the[Exception] thrownBy Seq(("a", 1L)).toDF("id", "amount")
      .select(to_glue_schema_registry(
        struct("id", "amount"),
        registry,
        "orders-proto",
        options("auto_register" -> "true")))
      .collect()
    Iterator.iterate[Throwable](writing)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ") should
      include("schema 'orders-proto' in registry '" + registry + "' is PROTOBUF, and this call writes AVRO")
  }

  test("Given structs and .proto definitions, then to_glue_schema_registry writes Protobuf: with version 1 (already " +
    "registered) read back with version 2; into a new schema refused without auto_register, registered as PROTOBUF " +
    "with it; a struct that does not fit refused when the query is analysed, naming the field and both types") {
    registryCreated
    MotoGlue.createSchema(registry, "orders-proto-write", orderProtoV1, "PROTOBUF")
    MotoGlue.registerVersion(registry, "orders-proto-write", orderProtoV2)
    val session = spark
    import session.implicits._
    val v1Rows = Seq(("a", 7, "gift"), ("b", -8, null)).toDF("id", "amount", "note")
      .select(struct("id", "amount", "note").as("s"))
    val written = v1Rows.select(to_glue_schema_registry(
      col("s"),
      registry,
      "orders-proto-write",
      options("protobufSchema" -> orderProtoV1, "compression" -> "zlib")).as("data"))
    written.select(from_glue_schema_registry(col("data"), registry, "orders-proto-write", options()).as("o"))
      .select("o.*").collect().map(r => (r.getString(0), r.getLong(1), Option(r.getString(2)))).toSet shouldBe
      Set(("a", 7L, None), ("b", -8L, None))

    val v2Rows = Seq(("c", 1L << 40, "USD"), ("d", 2L, null)).toDF("order_id", "amount", "currency")
      .select(struct(col("order_id").as("id"), col("amount"), col("currency")).as("s"))
    val write = options("protobufSchema" -> orderProtoV2, "protobufMessage" -> "shop.Order")
    Iterator.iterate[Throwable](the[Exception] thrownBy
      v2Rows.select(to_glue_schema_registry(col("s"), registry, "orders-proto-new", write)).collect())(_.getCause)
      .takeWhile(_ != null).map(_.getMessage).mkString(" | ") should
      (include("has no version with the writer's definition") and include("auto_register"))
    val framed = v2Rows.select(
      to_glue_schema_registry(col("s"), registry, "orders-proto-new", write + ("auto_register" -> "true")).as("data"))
      .collect().map(_.getAs[Array[Byte]](0)) // registers the version, the latest when the reader is defined below
    binaries(framed).select(from_glue_schema_registry(col("data"), registry, "orders-proto-new", options()).as("o"))
      .select("o.*").collect().map(r => (r.getString(0), r.getLong(1), r.getString(2))).toSet shouldBe
      Set(("c", 1L << 40, "USD"), ("d", 2L, null))
    MotoGlue.call(
      "GetSchema",
      s"""{"SchemaId": {"RegistryName": "$registry", "SchemaName": "orders-proto-new"}}""")
      .path("DataFormat").asText shouldBe "PROTOBUF"

    val misfit = the[Exception] thrownBy Seq(("e", "ten")).toDF("id", "amount")
      .select(to_glue_schema_registry(struct("id", "amount"), registry, "orders-proto-new", write))
    misfit.getMessage should include("struct field amount is string, and protobuf field amount of shop.Order is " +
      "int64 (it reads back as bigint)")
  }

  test("Given a struct whose schema the registry lacks, then to_glue_schema_registry refuses without auto_register, " +
    "registers it with auto_register, and its frames decode back, zlib too") {
    registryCreated
    MotoGlue.createSchema(registry, "orders-out", v1.toString)
    val session = spark
    import session.implicits._
    val rows = Seq(("a", 1L), ("b", 2L)).toDF("id", "amount").select(struct("id", "amount").as("s"))
    val refused = the[Exception] thrownBy
      rows.select(to_glue_schema_registry(col("s"), registry, "orders-out", options())).collect()
    Iterator.iterate[Throwable](refused)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ") should
      (include("has no version with the writer's definition") and include("auto_register"))
    val framed = rows.select(
      to_glue_schema_registry(
        col("s"),
        registry,
        "orders-out",
        options(
          "auto_register" -> "true",
          "compression" ->
            "zlib")).as("data"))
    framed.collect().foreach(r => r.getAs[Array[Byte]](0)(1) shouldBe 5.toByte)
    val back = framed.select(from_glue_schema_registry(col("data"), registry, "orders-out", options()).as("o"))
      .select("o.*")
    back.collect().map(r => (r.getString(0), r.getLong(1))).toSet shouldBe Set(("a", 1L), ("b", 2L))
  }

  test("Given GSR-framed records of all three formats put into kinesis-mock, when a streaming query reads them and " +
    "decodes each with its format's schema (told apart by partition key), then every record's fields arrive exactly " +
    "once") {
    registryCreated
    val (id1, id2) = twoVersions("orders-stream")
    val jsonId = MotoGlue.createSchema(
      registry,
      "orders-stream-json",
      """{"type": "object", "properties": {"id": {"type": "string"}, "amount": {"type": "integer"}}}""",
      "JSON")
    val protoId = MotoGlue.createSchema(registry, "orders-stream-proto", orderProtoV1, "PROTOBUF")
    val stream = TestStreams.createStream("it-gsr", shards = 2)
    val formats = Seq("avro", "json", "proto")
    val expected = (0 until 60).map(i => (formats(i % 3), s"o-$i", i.toLong))
    TestStreams.putRecords(
      stream,
      expected.map { case (format, id, n) =>
        val zlib = n % 2 == 1
        val record = format match {
          case "avro" => if (zlib) frame(id2, avro(v2, id, n, "EUR"), zlib) else frame(id1, avro(v1, id, n.toInt, null))
          case "json" => frame(jsonId, s"""{"id": "$id", "amount": $n}""".getBytes("UTF-8"), zlib)
          case _ => frame(protoId, protobuf(0, 1 -> id, 2 -> n.toInt), zlib)
        }
        (s"$format-$id", record)
      })
    val name = s"gsr_${UUID.randomUUID.toString.take(8)}"
    val record = struct("data", "shardId", "sequenceNumber")
    // FAILFAST: a record given to another format's decoder would fail the query.
    def decoded(format: String, schema: String) = when(
      col("partitionKey").startsWith(format),
      from_glue_schema_registry(record, registry, schema, options("mode" -> "FAILFAST"))).as(format)
    val query = readKinesis(stream, "TRIM_HORIZON")
      .select(
        col("partitionKey"),
        decoded("avro", "orders-stream"),
        decoded("json", "orders-stream-json"),
        decoded("proto", "orders-stream-proto"))
      .select(
        substring_index(col("partitionKey"), "-", 1),
        coalesce(formats.map(f => col(s"$f.id")): _*),
        coalesce(formats.map(f => col(s"$f.amount").cast("long")): _*))
      .writeStream.format("memory").queryName(name).option("checkpointLocation", newCheckpointDir()).start()
    try {
      Eventually.awaitValue(s"the ${expected.size} records decoded", 60.seconds) {
        query.processAllAvailable()
        Some(spark.table(name).count()).filter(_ >= expected.size)
      }
      spark.table(name).collect().map(r => (r.getString(0), r.getString(1), r.getLong(2))).toSeq should
        contain theSameElementsAs expected
    } finally query.stop()
  }
}
