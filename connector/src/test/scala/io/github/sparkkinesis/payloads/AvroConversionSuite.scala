package io.github.sparkkinesis.payloads

import java.nio.ByteBuffer

import org.apache.avro.Schema
import org.apache.avro.generic.{GenericData, GenericRecord}
import org.apache.avro.io.DecoderFactory
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.compat.JavaCollections._

/** The connector's own Avro-to-Spark and Spark-to-Avro mappings: every Avro type, and a round trip through Avro. */
class AvroConversionSuite extends AnyFunSuite with Matchers {

  private val schema = new Schema.Parser().parse(
    """{"type":"record","name":"All","fields":[
      |{"name":"s","type":"string"},{"name":"i","type":"int"},{"name":"l","type":"long"},
      |{"name":"f","type":"float"},{"name":"d","type":"double"},{"name":"b","type":"boolean"},
      |{"name":"bytes","type":"bytes"},{"name":"fixed","type":{"type":"fixed","name":"F2","size":2}},
      |{"name":"e","type":{"type":"enum","name":"Colour","symbols":["RED","GREEN"]}},
      |{"name":"opt","type":["null","string"]},
      |{"name":"either","type":["null","int","string"]},
      |{"name":"day","type":{"type":"int","logicalType":"date"}},
      |{"name":"ms","type":{"type":"long","logicalType":"timestamp-millis"}},
      |{"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},
      |{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
      |{"name":"tags","type":{"type":"array","items":"string"}},
      |{"name":"counts","type":{"type":"map","values":"long"}},
      |{"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}}]}"""
      .stripMargin)

  private def record: GenericRecord = {
    val r = new GenericData.Record(schema)
    val inner = new GenericData.Record(schema.getField("inner").schema)
    inner.put("x", 5)
    Seq[(String, AnyRef)](
      "s" -> "text",
      "i" -> Int.box(1),
      "l" -> Long.box(2L),
      "f" -> Float.box(1.5f),
      "d" -> Double.box(2.5),
      "b" -> Boolean.box(true),
      "bytes" -> ByteBuffer.wrap(Array[Byte](1, 2)),
      "fixed" -> new GenericData.Fixed(schema.getField("fixed").schema, Array[Byte](3, 4)),
      "e" -> new GenericData.EnumSymbol(schema.getField("e").schema, "GREEN"),
      "opt" -> null,
      "either" -> "right",
      "day" -> Int.box(19000),
      "ms" -> Long.box(1700000000123L),
      "us" -> Long.box(1700000000123456L),
      "price" -> ByteBuffer.wrap(java.math.BigInteger.valueOf(12345).toByteArray),
      "tags" -> List("a", "b").asJava,
      "counts" -> Map("k" -> Long.box(3L)).asJava,
      "inner" -> inner)
      .foreach { case (k, v) => r.put(k, v) }
    r
  }

  private val expectedType = StructType(Seq(
    "s" -> StringType,
    "i" -> IntegerType,
    "l" -> LongType,
    "f" -> FloatType,
    "d" -> DoubleType,
    "b" -> BooleanType,
    "bytes" -> BinaryType,
    "fixed" -> BinaryType,
    "e" -> StringType,
    "opt" -> StringType,
    "either" -> StructType(Seq(StructField("int", IntegerType), StructField("string", StringType))),
    "day" -> DateType,
    "ms" -> TimestampType,
    "us" -> TimestampType,
    "price" -> DecimalType(9, 2),
    "tags" -> ArrayType(StringType),
    "counts" -> MapType(StringType, LongType),
    "inner" -> StructType(Seq(StructField("x", IntegerType)))).map { case (n, t) => StructField(n, t) })

  /** The record as Avro bytes, read into Spark's values as the GSR decoder reads data of the reader's own schema. */
  private def toSpark(r: GenericRecord): InternalRow =
    AvroToSpark.reader(schema)(DecoderFactory.get().binaryDecoder(GsrTestData.avro(r), null)).asInstanceOf[InternalRow]

  test("every Avro type has its Spark type, all fields nullable") {
    AvroToSpark.sparkType(schema) shouldBe expectedType
  }

  test("Given a record of every type, then its Spark values are Spark's internal ones") {
    val row = toSpark(record)
    row.getUTF8String(0) shouldBe UTF8String.fromString("text")
    (row.getInt(1), row.getLong(2), row.getFloat(3), row.getDouble(4), row.getBoolean(5)) shouldBe
      (1, 2L, 1.5f, 2.5, true)
    row.getBinary(6).toSeq shouldBe Seq[Byte](1, 2)
    row.getBinary(7).toSeq shouldBe Seq[Byte](3, 4)
    row.getUTF8String(8).toString shouldBe "GREEN"
    row.isNullAt(9) shouldBe true
    val either = row.getStruct(10, 2)
    (either.isNullAt(0), either.getUTF8String(1).toString) shouldBe (true, "right")
    (row.getInt(11), row.getLong(12), row.getLong(13)) shouldBe (19000, 1700000000123000L, 1700000000123456L)
    row.getDecimal(14, 9, 2).toJavaBigDecimal shouldBe new java.math.BigDecimal("123.45")
    row.getArray(15).toSeq[UTF8String](StringType).map(_.toString) shouldBe Seq("a", "b")
    row.getMap(16).valueArray.getLong(0) shouldBe 3L
    row.getStruct(17, 1).getInt(0) shouldBe 5
  }

  test("Given a record of every type, when read through Avro's resolving decoder (as data of another writer version " +
    "is), then its Spark values are those read straight") {
    // Given the record's bytes, read straight and through a resolving decoder of the same writer and reader
    val bytes = GsrTestData.avro(record)
    val resolving =
      DecoderFactory.get().resolvingDecoder(schema, schema, DecoderFactory.get().binaryDecoder(bytes, null))
    // When each is made an UnsafeRow (whose equality is its bytes: maps and binaries included)
    val unsafe = UnsafeProjection.create(expectedType)
    val resolved = unsafe(AvroToSpark.reader(schema)(resolving).asInstanceOf[InternalRow]).copy()
    // Then they are the same
    resolved shouldBe unsafe(toSpark(record)).copy()
  }

  test("Given a recursive record, then it has no Spark type and the message names the record") {
    val recursive = new Schema.Parser().parse(
      """{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}""")
    the[IllegalArgumentException] thrownBy AvroToSpark.sparkType(recursive) should have message
      "Avro record Node contains itself: a recursive schema has no Spark type"
  }

  test("Given a struct, then the derived Avro schema reads back as that struct, and values survive the round trip") {
    val struct = StructType(Seq(
      StructField("id", StringType),
      StructField("amount", LongType),
      StructField("price", DecimalType(9, 2)),
      StructField("at", TimestampType),
      StructField("tags", ArrayType(StringType)),
      StructField("inner", StructType(Seq(StructField("x", IntegerType))))))
    val avroSchema = SparkToAvro.schemaOf(struct, "orders-v1")
    avroSchema.getName shouldBe "orders_v1"
    AvroToSpark.sparkType(avroSchema) shouldBe struct
    val row = InternalRow(
      UTF8String.fromString("a"),
      7L,
      Decimal(BigDecimal("1.50"), 9, 2),
      1700000000123456L,
      org.apache.spark.sql.catalyst.util.ArrayData.toArrayData(Array(UTF8String.fromString("t"))),
      InternalRow(null))
    val datum = SparkToAvro.converter(avroSchema, struct)(row).asInstanceOf[GenericRecord]
    val bytes = GsrTestData.avro(datum)
    val back = AvroToSpark.reader(avroSchema)(DecoderFactory.get().binaryDecoder(bytes, null)).asInstanceOf[InternalRow]
    back.getUTF8String(0).toString shouldBe "a"
    back.getLong(1) shouldBe 7L
    back.getDecimal(2, 9, 2).toJavaBigDecimal shouldBe new java.math.BigDecimal("1.50")
    back.getLong(3) shouldBe 1700000000123456L
    back.getArray(4).getUTF8String(0).toString shouldBe "t"
    back.getStruct(5, 1).isNullAt(0) shouldBe true
  }

  test("Given a Spark type the Avro schema does not fit, then the converter refuses it naming both") {
    val avroSchema = SparkToAvro.schemaOf(StructType(Seq(StructField("n", LongType))), "s")
    the[IllegalArgumentException] thrownBy SparkToAvro.converter(
      avroSchema,
      StructType(Seq(StructField("n", StringType)))) should
      have message "to_glue_schema_registry cannot write Spark's string as Avro long"
  }
}
