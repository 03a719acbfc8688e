package io.github.sparkkinesis.payloads

import java.io.ByteArrayOutputStream
import java.util.UUID

import com.google.protobuf.{CodedOutputStream, DynamicMessage, Message}
import com.google.protobuf.Descriptors.Descriptor
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.payloads.GsrTestData.{fields, Registry}

/**
 * The GSR Protobuf decoder: frames laid out as AWS's serializer writes them (prefix, message index varint, message),
 * with messages built by protobuf-java's DynamicMessage; two versions resolved by field number; every bad input.
 */
class GsrProtobufDecoderSuite extends AnyFunSuite with Matchers {

  /** A version of the order schema: the fields both versions share, and `own`. */
  private def order(own: String, after: String = ""): String =
    s"""syntax = "proto3";
       |package shop;
       |import "google/protobuf/timestamp.proto";
       |message Order {
       |  string id = 1;
       |  repeated Line lines = 4;
       |  map<string, string> tags = 5;
       |  google.protobuf.Timestamp placed = 7;
       |  message Line { string sku = 1; uint32 quantity = 2; }
       |  $own
       |}
       |$after""".stripMargin

  private val V1 = order("int32 amount = 2; string note = 3;")

  /** Version 2 widens amount (int32 to int64 share the wire), drops note, adds currency, status and a message. */
  private val V2 = order(
    "int64 amount = 2; optional string currency = 6; Status status = 8; enum Status { NEW = 0; PAID = 1; }",
    "message Refund { string order_id = 1; }")

  private val v1 = SchemaVersion(UUID.fromString("a1a1a1a1-0000-4000-8000-000000000001"), V1, "PROTOBUF")
  private val v2 = SchemaVersion(UUID.fromString("a2a2a2a2-0000-4000-8000-000000000002"), V2, "PROTOBUF")

  private def schema(definition: String): ProtoSchema = ProtoSchema.parse(definition).fold(fail(_), identity)

  /** A message of `descriptor` with `values` by field name: Seq for repeated fields, (key, value) pairs for maps. */
  private def message(descriptor: Descriptor, values: (String, Any)*): DynamicMessage = {
    val builder = DynamicMessage.newBuilder(descriptor)
    values.foreach { case (name, value) =>
      val field = descriptor.findFieldByName(name)
      value match {
        case entries: Map[_, _] =>
          entries.foreach { case (k, v) =>
            builder.addRepeatedField(field, message(field.getMessageType, "key" -> k, "value" -> v))
          }
        case items: Seq[_] => items.foreach(item => builder.addRepeatedField(field, item))
        case one => builder.setField(field, one)
      }
    }
    builder.build()
  }

  /** The GSR Protobuf payload: the message index as a varint, then the message's bytes. */
  private def payload(index: Int, m: Message): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val coded = CodedOutputStream.newInstance(out)
    coded.writeUInt32NoTag(index)
    m.writeTo(coded)
    coded.flush()
    out.toByteArray
  }

  private def decoder(registry: Registry, definition: String = V2, name: Option[String] = None) =
    new GsrProtobufDecoder(registry.target, new ProtobufReader(definition, name), registry.lookup)

  private def s(text: String) = UTF8String.fromString(text)

  private def reason(d: GsrDecoder, bytes: Array[Byte]): String =
    d.decode(bytes).left.toOption.getOrElse(fail("decoded")).reason

  test("Given records of two versions, some zlib, when read with version 2 as reader, then fields match by number: " +
    "version 1's widened amount read, its dropped note ignored, the fields it lacks null or their default") {
    val registry = new Registry(v1, v2)
    val d = decoder(registry)
    new ProtobufReader(V2, None).sparkType.fieldNames.toSeq shouldBe
      Seq("id", "lines", "tags", "placed", "amount", "currency", "status")
    val order1 = schema(V1).message(None)
    val line = order1.findNestedTypeByName("Line")
    val placed = com.google.protobuf.Timestamp.newBuilder().setSeconds(1700000000L).setNanos(123456789).build()
    val first = message(
      order1,
      "id" -> "a",
      "amount" -> 7,
      "note" -> "gift",
      "lines" -> Seq(message(line, "sku" -> "x", "quantity" -> -1)),
      "tags" -> Map("k" -> "v"),
      "placed" -> placed)
    val row1 = fields(d.decode(GsrFrame.write(v1.id, payload(0, first), zlib = true)).toOption.get)
    row1.head shouldBe s("a")
    fields(row1(1).asInstanceOf[ArrayData].getStruct(0, 2)) shouldBe Seq(s("x"), 4294967295L)
    val tags = row1(2).asInstanceOf[MapData]
    (tags.keyArray().getUTF8String(0), tags.valueArray().getUTF8String(0)) shouldBe (s("k"), s("v"))
    row1.drop(3) shouldBe Seq(1700000000123456L, 7L, null, s("NEW"))

    val order2 = schema(V2).message(None)
    val second = message(
      order2,
      "id" -> "b",
      "amount" -> (1L << 40),
      "currency" -> "USD",
      "status" -> order2.findEnumTypeByName("Status").findValueByName("PAID"))
    val row2 = fields(d.decode(GsrFrame.write(v2.id, payload(0, second), zlib = false)).toOption.get)
    row2.head shouldBe s("b")
    row2(1).asInstanceOf[ArrayData].numElements() shouldBe 0
    row2.drop(3) shouldBe Seq(null, 1L << 40, s("USD"), s("PAID"))
    d.decode(GsrFrame.write(v1.id, payload(0, first), zlib = false)).isRight shouldBe true
    registry.fetches shouldBe 2
  }

  test("Given every protobuf type, then each maps to its documented Spark type and value") {
    val definition = GsrProtobufTestData.AllTypes
    val reader = new ProtobufReader(definition, None)
    val innerType =
      StructType(Seq(
        StructField("ok", BooleanType),
        StructField("labels", ArrayType(StringType, containsNull = false))))
    reader.sparkType.map(f => f.name -> f.dataType).toMap shouldBe Map(
      "i32" -> IntegerType,
      "s32" -> IntegerType,
      "sf32" -> IntegerType,
      "u32" -> LongType,
      "f32" -> LongType,
      "i64" -> LongType,
      "s64" -> LongType,
      "sf64" -> LongType,
      "u64" -> DecimalType(20, 0),
      "f64" -> DecimalType(20, 0),
      "f" -> FloatType,
      "d" -> DoubleType,
      "b" -> BooleanType,
      "s" -> StringType,
      "raw" -> BinaryType,
      "kind" -> StringType,
      "unknown_kind" -> StringType,
      "took" -> DayTimeIntervalType(),
      "wrapped" -> LongType,
      "absent" -> StringType,
      "name" -> StringType,
      "number" -> IntegerType,
      "at" -> TimestampType,
      "inner_by_id" -> MapType(IntegerType, innerType, valueContainsNull = true),
      "tags" -> MapType(StringType, StringType, valueContainsNull = true),
      "packed" -> ArrayType(LongType, containsNull = false),
      "inners" -> ArrayType(innerType, containsNull = false),
      "note" -> StringType,
      "one" -> innerType)
    val all = reader.message
    val kind = all.findEnumTypeByName("Kind")
    val inner = all.findNestedTypeByName("Inner")
    val written = message(
      all,
      "i32" -> -1,
      "s32" -> -2,
      "sf32" -> -3,
      "u32" -> -1,
      "f32" -> -2,
      "i64" -> Long.MinValue,
      "s64" -> -5L,
      "sf64" -> -6L,
      "u64" -> -1L,
      "f64" -> 42L,
      "f" -> 1.5f,
      "d" -> 2.5,
      "b" -> true,
      "s" -> "é",
      "raw" -> com.google.protobuf.ByteString.copyFrom(Array[Byte](0, 1)),
      "kind" -> kind.findValueByName("SOME"),
      "unknown_kind" -> kind.findValueByNumberCreatingIfUnknown(7),
      "took" -> com.google.protobuf.Duration.newBuilder().setSeconds(-2).setNanos(500000000).build(),
      "wrapped" -> com.google.protobuf.Int64Value.of(9L),
      "number" -> 3,
      "inner_by_id" -> Map(1 -> message(inner, "ok" -> true)),
      "packed" -> Seq(1L, 2L))
    val version = SchemaVersion(UUID.randomUUID(), definition, "PROTOBUF")
    val row = fields(decoder(new Registry(version), definition).decode(
      GsrFrame.write(version.id, payload(0, written), zlib = false)).toOption.get)
    val byName = reader.sparkType.fieldNames.zip(row).toMap
    byName.filter { case (_, v) =>
      !v.isInstanceOf[ArrayData] && !v.isInstanceOf[MapData] &&
      !v.isInstanceOf[Array[Byte]]
    } shouldBe Map(
      "i32" -> -1,
      "s32" -> -2,
      "sf32" -> -3,
      "u32" -> 4294967295L,
      "f32" -> 4294967294L,
      "i64" -> Long.MinValue,
      "s64" -> -5L,
      "sf64" -> -6L,
      "u64" -> Decimal(BigDecimal("18446744073709551615"), 20, 0),
      "f64" -> Decimal(42L, 20, 0),
      "f" -> 1.5f,
      "d" -> 2.5,
      "b" -> true,
      "s" -> s("é"),
      "kind" -> s("SOME"),
      "unknown_kind" -> s("7"),
      "took" -> -1500000L,
      "wrapped" -> 9L,
      "absent" -> null,
      "at" -> null,
      "name" -> null,
      "number" -> 3,
      "note" -> null,
      "one" -> null)
    byName("raw").asInstanceOf[Array[Byte]].toSeq shouldBe Seq[Byte](0, 1)
    val map = byName("inner_by_id").asInstanceOf[MapData]
    (map.keyArray().getInt(0), map.valueArray().getStruct(0, 2).getBoolean(0)) shouldBe (1, true)
    byName("packed").asInstanceOf[ArrayData].toLongArray().toSeq shouldBe Seq(1L, 2L)
  }

  test("Given proto2, then an absent optional field is null, or its declared default, and required fields are " +
    "enforced by protobuf") {
    val definition =
      """syntax = "proto2";
        |message Reading { required string sensor = 1; optional int32 level = 2 [default = -4];
        |  optional string unit = 3; optional double ratio = 4 [default = 0.5]; }""".stripMargin
    val version = SchemaVersion(UUID.randomUUID(), definition, "PROTOBUF")
    val d = decoder(new Registry(version), definition)
    val reading = new ProtobufReader(definition, None).message
    fields(d.decode(GsrFrame.write(version.id, payload(0, message(reading, "sensor" -> "t1")), zlib = false))
      .toOption.get) shouldBe Seq(s("t1"), -4, null, 0.5)
    reason(d, GsrFrame.write(version.id, payload(0, DynamicMessage.getDefaultInstance(reading)), zlib = false)) should
      include("sensor")
  }

  test("Given the message index, then a record of another message fails naming it, and protobufMessage reads it") {
    val registry = new Registry(v2)
    val refundType = schema(V2).message(Some("Refund"))
    val refund = GsrFrame.write(v2.id, payload(3, message(refundType, "order_id" -> "o-1")), zlib = false)
    reason(decoder(registry), refund) shouldBe "the record is message shop.Refund, not the reader's shop.Order"
    reason(decoder(registry), GsrFrame.write(v2.id, payload(9, refundType.toProto), zlib = false)) shouldBe
      s"the record is message index 9, which schema version ${v2.id} does not have, not the reader's shop.Order"
    fields(decoder(registry, V2, Some("Refund")).decode(refund).toOption.get) shouldBe Seq(s("o-1"))
  }

  test("every bad input gives a failure naming what is wrong, and the version id when the frame has one") {
    val avro = SchemaVersion(UUID.randomUUID(), GsrTestData.V1.toString, "AVRO")
    val broken =
      SchemaVersion(UUID.randomUUID(), "syntax = \"proto3\";\nmessage Order {\n  string id = 1\n}", "PROTOBUF")
    val other = SchemaVersion(UUID.randomUUID(), "syntax = \"proto3\";\npackage shop;\nmessage Refund {}", "PROTOBUF")
    val unknown = UUID.randomUUID()
    val d = decoder(new Registry(v2, avro, broken, other))
    val good = GsrFrame.write(v2.id, payload(0, message(schema(V2).message(None), "id" -> "a")), false)
    reason(d, Array[Byte](3, 0)) should include("at least 18 bytes")
    reason(d, good.updated(1, 5.toByte)) should include("the zlib-compressed payload is corrupt")
    reason(d, good.dropRight(1)) should include(s"the payload is not a Protobuf shop.Order of schema version ${v2.id}")
    reason(d, GsrFrame.write(v2.id, Array.empty, zlib = false)) should include("not a Protobuf shop.Order")
    reason(d, good.updated(1, 0.toByte).take(18) ++ Array[Byte](0, 0x0f)) should include("not a Protobuf")
    reason(d, good.patch(2, GsrFrame.write(unknown, Array.empty, false).slice(2, 18), 16)) shouldBe
      s"schema version $unknown is not in the registry"
    reason(d, GsrFrame.write(avro.id, Array[Byte](0), zlib = false)) shouldBe
      s"schema version ${avro.id} is AVRO, and the reader schema is Protobuf"
    reason(d, GsrFrame.write(broken.id, Array[Byte](0), zlib = false)) shouldBe
      s"schema version ${broken.id} is not a valid .proto definition: line 4: expected ';' at '}'"
    reason(d, GsrFrame.write(other.id, Array[Byte](0), zlib = false)) shouldBe
      s"schema version ${other.id} has no message shop.Order (it has shop.Refund)"
  }

  test("Given a reader that has no Spark type, then it is refused naming the message") {
    val recursive = "syntax = \"proto3\";\nmessage Node { string name = 1; repeated Node children = 2; }"
    the[IllegalArgumentException] thrownBy new ProtobufReader(recursive, None).sparkType should have message
      "protobuf message Node contains itself: a recursive message has no Spark type"
    the[IllegalArgumentException] thrownBy new ProtobufReader("message {", None) should have message
      "the reader's .proto definition is not valid: line 1: expected a name at '{'"
  }
}
