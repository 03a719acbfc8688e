package io.github.sparkkinesis.bench

import java.io.ByteArrayOutputStream
import java.util.UUID

import org.apache.avro.Schema
import org.apache.avro.generic.{GenericData, GenericDatumWriter, GenericRecord}
import org.apache.avro.io.EncoderFactory
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.avro.functions.from_avro
import org.apache.spark.sql.functions.{col, from_json}

import io.github.sparkkinesis.it.{MotoGlue, ProtobufWire}
import io.github.sparkkinesis.it.GsrFrames.frame
import io.github.sparkkinesis.payloads.functions.from_glue_schema_registry

/**
 * Decode rate on one core (local[1]): `from_glue_schema_registry` on GSR-framed Avro records against Spark's
 * `from_avro` with the same schema fixed, and on GSR-framed JSON Schema records against Spark's `from_json` with the
 * reader's struct, on the same payloads (without the frame's 18 bytes), in the same run; and on the same orders as GSR
 * Protobuf records (no reference: Spark's `from_protobuf` needs a compiled descriptor). The records are cached in
 * memory first, so each measures decoding only. Needs moto (MOTO_ENDPOINT, or starts its own).
 *
 * build/sbt "bench/runMain io.github.sparkkinesis.bench.GsrDecodeBench [records] [rounds]"
 */
object GsrDecodeBench {

  private val schema = new Schema.Parser().parse(
    """{"type":"record","name":"Order","namespace":"bench","fields":[
      |{"name":"id","type":"string"},{"name":"customer","type":"string"},{"name":"amount","type":"long"},
      |{"name":"price","type":"double"},{"name":"quantity","type":"int"},{"name":"express","type":"boolean"},
      |{"name":"note","type":["null","string"],"default":null},
      |{"name":"tags","type":{"type":"array","items":"string"}}]}""".stripMargin)

  /** The same order as a .proto definition (note optional, so that its absence is null as in Avro). */
  private val proto =
    """syntax = "proto3";
      |package bench;
      |message Order { string id = 1; string customer = 2; int64 amount = 3; double price = 4; int32 quantity = 5;
      |  bool express = 6; optional string note = 7; repeated string tags = 8; }""".stripMargin

  def main(args: Array[String]): Unit = {
    val records = args.headOption.map(_.toInt).getOrElse(1000000)
    val rounds = args.lift(1).map(_.toInt).getOrElse(5)
    val spark = SparkSession.builder().master("local[1]").appName("gsr-decode-bench")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate()
    try {
      val registry = s"bench-${UUID.randomUUID.toString.take(8)}"
      MotoGlue.createRegistry(registry)
      val versionId = MotoGlue.createSchema(registry, "orders", schema.toString)
      val avroRows = cached(spark, records, versionId, payload)
      compare(
        s"GSR Avro decode against from_avro, $records records",
        avroRows,
        rounds,
        from_glue_schema_registry(col("framed"), registry, "orders", failFast),
        "from_avro (fixed schema) " -> from_avro(col("payload"), schema.toString))
      avroRows.unpersist()

      val jsonVersion = MotoGlue.createSchema(registry, "orders-json", jsonSchema, "JSON")
      val jsonRows = cached(spark, records, jsonVersion, jsonPayload)
      val gsrJson = from_glue_schema_registry(col("framed"), registry, "orders-json", failFast)
      val readerType = jsonRows.select(gsrJson).schema.head.dataType
      compare(
        s"GSR JSON Schema decode against from_json, $records records",
        jsonRows,
        rounds,
        gsrJson,
        "from_json (same struct)   " -> from_json(col("payload").cast("string"), readerType, Map("mode" -> "FAILFAST")))
      jsonRows.unpersist()

      val protoVersion = MotoGlue.createSchema(registry, "orders-proto", proto, "PROTOBUF")
      val protoRows = cached(spark, records, protoVersion, protobufPayload)
      compare(
        s"GSR Protobuf decode, $records records",
        protoRows,
        rounds,
        from_glue_schema_registry(col("framed"), registry, "orders-proto", failFast))
    } finally spark.stop()
  }

  /** FAILFAST, so that a record not decoded fails the run rather than making a fast null. */
  private val failFast = MotoGlue.functionOptions + ("mode" -> "FAILFAST")

  /** `records` rows of `framed` (the payload GSR-framed with `versionId`) and bare `payload`, cached in memory. */
  private def cached(spark: SparkSession, records: Int, versionId: UUID, payload: Int => Array[Byte]): DataFrame = {
    import spark.implicits._
    // Built by a task rather than from a local collection, which every task would then carry.
    val rows = spark.range(records).as[Long].map { i =>
      val p = payload(i.toInt)
      (frame(versionId, p), p)
    }.toDF("framed", "payload").cache()
    rows.count()
    rows
  }

  /** Prints the best rate (and every round's) of `gsr` and of each `reference` decoder on `rows`, alternated. */
  private def compare(title: String, rows: DataFrame, rounds: Int, gsr: Column, references: (String, Column)*): Unit = {
    val records = rows.count()
    val bytes = rows.selectExpr("sum(length(payload))").head().getLong(0)
    println(s"$title of ${bytes / records} bytes, local[1], best of $rounds rounds (rows/s on one core):")
    val decoders = ("from_glue_schema_registry" -> gsr) +: references
    // Alternated, so that the machine's load falls on all alike.
    val rates = (1 to rounds).map(_ => decoders.map { case (_, decode) => rate(rows, decode, records) })
    decoders.map(_._1).zipWithIndex.foreach { case (name, i) => println(line(name, rates.map(_(i)))) }
  }

  private def line(name: String, rates: Seq[Double]): String =
    f"  $name: ${rates.max}%,.0f rows/s (rounds: ${rates.map(r => f"$r%.0f").mkString(", ")})"

  /** Rows per second decoding every row of `rows` with `decode` into the noop sink. */
  private def rate(rows: DataFrame, decode: Column, records: Long): Double = {
    val start = System.nanoTime()
    rows.select(decode.as("o")).write.format("noop").mode("overwrite").save()
    records / ((System.nanoTime() - start) / 1e9)
  }

  private def payload(i: Int): Array[Byte] = {
    val r = new GenericData.Record(schema)
    r.put("id", s"order-$i")
    r.put("customer", s"customer-${i % 1000}")
    r.put("amount", i.toLong * 100)
    r.put("price", i * 0.25)
    r.put("quantity", i % 7)
    r.put("express", i % 2 == 0)
    r.put("note", if (i % 3 == 0) null else "leave at the door")
    r.put("tags", java.util.Arrays.asList("a", "b"))
    val out = new ByteArrayOutputStream()
    val encoder = EncoderFactory.get().binaryEncoder(out, null)
    new GenericDatumWriter[GenericRecord](schema).write(r, encoder)
    encoder.flush()
    out.toByteArray
  }

  /** Order `i` as the Protobuf payload (message index 0): the same values as [[payload]]. */
  private def protobufPayload(i: Int): Array[Byte] = {
    val note = if (i % 3 == 0) Nil else Seq(7 -> "leave at the door")
    val fields = Seq(
      1 -> s"order-$i",
      2 -> s"customer-${i % 1000}",
      3 -> i.toLong * 100,
      4 -> i * 0.25,
      5 -> i % 7,
      6 -> (i % 2 == 0)) ++ note ++ Seq(8 -> "a", 8 -> "b")
    ProtobufWire.payload(0, fields: _*)
  }

  /** The order's JSON Schema: the Avro schema's fields, tags an array of strings, note a string or null. */
  private val jsonSchema =
    """{"type": "object", "properties": {"id": {"type": "string"}, "customer": {"type": "string"},
      |"amount": {"type": "integer"}, "price": {"type": "number"}, "quantity": {"type": "integer"},
      |"express": {"type": "boolean"}, "note": {"type": ["string", "null"]},
      |"tags": {"type": "array", "items": {"type": "string"}}}}""".stripMargin

  private def jsonPayload(i: Int): Array[Byte] = {
    val note = if (i % 3 == 0) "null" else "\"leave at the door\""
    (s"""{"id":"order-$i","customer":"customer-${i % 1000}","amount":${i.toLong * 100},"price":${i * 0.25},""" +
      s""""quantity":${i % 7},"express":${i % 2 == 0},"note":$note,"tags":["a","b"]}""").getBytes("UTF-8")
  }
}
