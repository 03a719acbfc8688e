package io.github.sparkkinesis.payloads

import java.util.UUID

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.payloads.GsrJsonTestData._
import io.github.sparkkinesis.payloads.GsrTestData.Registry

/** The GSR JSON decoder: frames, records of two writer versions read by the reader schema, and every bad input. */
class GsrJsonDecoderSuite extends AnyFunSuite with Matchers {

  private def decoder(registry: Registry, reader: String = V2) =
    new GsrJsonDecoder(registry.target, JsonSchemaToSpark.reader(reader), registry.lookup)

  /** The row's fields as Scala values: strings, arrays and maps unwrapped; nested rows as their fields. */
  private def fields(row: Any): Seq[Any] = {
    val r = row.asInstanceOf[InternalRow]
    (0 until r.numFields).map(i => plain(if (r.isNullAt(i)) null else r.get(i, null)))
  }

  private def plain(value: Any): Any = value match {
    case s: UTF8String => s.toString
    case a: ArrayData => a.array.toSeq.map(plain)
    case m: MapData => m.keyArray.array.map(plain).zip(m.valueArray.array.map(plain)).toMap
    case r: InternalRow => fields(r)
    case other => other
  }

  private def decoded(d: GsrJsonDecoder, frame: Array[Byte]): Seq[Any] =
    fields(d.decode(frame).fold(f => fail(f.reason), identity))

  test("Given records of two versions, some zlib, when read with version 2 as reader, then version 1's are read by " +
    "the reader's properties (note dropped, added ones null, integer as number) and version 2's read as written") {
    val registry = new Registry(Version1, Version2)
    val d = decoder(registry)
    decoded(d, GsrFrame.write(V1Id, json("""{"id": "a", "amount": 7, "note": "gift"}"""), zlib = false)) shouldBe
      Seq("a", 7.0, null, null, null)
    decoded(d, GsrFrame.write(V1Id, json("""{"id": "b", "amount": 8, "note": null}"""), zlib = true)) shouldBe
      Seq("b", 8.0, null, null, null)
    val v2 = """{"lines": [{"sku": "x1", "qty": 2, "gift": true}, {"qty": 1.0}], "id": "c", "amount": 12.5,
               |"currency": "USD", "placed": "2026-11-27T08:15:30.123456+01:00", "channel": {"web": [1]}}"""
    decoded(d, GsrFrame.write(V2Id, json(v2.stripMargin), zlib = true)) shouldBe
      Seq("c", 12.5, "USD", 1795763730123456L, Seq(Seq("x1", 2L), Seq(null, 1L)))
    registry.fetches shouldBe 2
  }

  test("Given properties the schema leaves untyped or maps, then they hold the value's JSON text and map entries") {
    val reader = """{"type": "object", "properties": {"any": {}, "attrs": {"additionalProperties": {"type":
                   |"boolean"}}, "day": {"type": "string", "format": "date"}}}""".stripMargin
    val version = SchemaVersion(V1Id, reader, "JSON")
    val d = decoder(new Registry(version), reader)
    val record = """{"any": {"a": [1, "x", null]}, "attrs": {"new": true, "old": false}, "day": "1970-01-11"}"""
    decoded(d, GsrFrame.write(V1Id, json(record), zlib = false)) shouldBe
      Seq("""{"a":[1,"x",null]}""", Map("new" -> true, "old" -> false), 10)
    decoded(d, GsrFrame.write(V1Id, json("""{"any": 12.50}"""), zlib = false)) shouldBe Seq("12.50", null, null)
  }

  test("Given a version whose fetch failed for a while, when it can be fetched again, then it is decoded: transient " +
    "failures are not kept, unlike versions") {
    val registry = new Registry(Version1)
    registry.down = true
    val d = decoder(registry)
    val record = GsrFrame.write(V1Id, json("""{"id": "a"}"""), zlib = false)
    d.decode(record).left.toOption.get.reason should include("cannot be fetched: GetSchemaVersion failed: throttled")
    registry.down = false
    decoded(d, record) shouldBe Seq("a", null, null, null, null)
    d.decode(record).isRight shouldBe true
    registry.fetches shouldBe 1
  }

  test("every bad input gives a failure naming what is wrong, and the version id when the frame has one") {
    val avro = SchemaVersion(UUID.fromString("22222222-2222-3333-4444-555555555555"), GsrTestData.V1.toString, "AVRO")
    val registry = new Registry(Version1, Version2, avro)
    val d = decoder(registry)
    val good = GsrFrame.write(V2Id, json("""{"id": "a"}"""), zlib = false)
    val unknown = UUID.fromString("11111111-2222-3333-4444-555555555555")
    def reason(bytes: Array[Byte]): (Option[UUID], String) = {
      val failure = d.decode(bytes).left.toOption.getOrElse(fail(s"decoded ${new String(bytes, "UTF-8")}"))
      (failure.versionId, failure.reason)
    }
    def record(text: String) = reason(GsrFrame.write(V2Id, json(text), zlib = false))._2
    val mismatch = s"the payload of schema version $V2Id does not match the reader schema: "
    reason(Array[Byte](3, 0, 1)) shouldBe (
      None,
      "a Glue Schema Registry frame has at least 18 bytes, this record has 3")
    reason(good.updated(0, 2.toByte))._2 should include("the first byte is 2, not 3")
    reason(good.updated(1, 1.toByte)) shouldBe (Some(V2Id), "compression byte 1 is neither 0 (none) nor 5 (zlib)")
    reason(good.updated(1, 5.toByte))._2 should include("the zlib-compressed payload is corrupt")
    reason(GsrFrame.write(unknown, json("{}"), zlib = false)) shouldBe
      (Some(unknown), s"schema version $unknown is not in the registry")
    reason(GsrFrame.write(avro.id, json("{}"), zlib = false)) shouldBe
      (Some(avro.id), s"schema version ${avro.id} is AVRO, and the reader schema is a JSON Schema")
    record("""{"id": "a", "amount": "12"}""") shouldBe mismatch + "field amount is the string '12', not a number"
    record("""{"id": 5}""") shouldBe mismatch + "field id is 5, not a string"
    record("""{"lines": [{"qty": 1.5}]}""") shouldBe mismatch + "field lines[].qty is 1.5, not an integer"
    record("""{"lines": [{"qty": 9223372036854775808}]}""") should include("not an integer of 64 bits")
    record("""{"lines": {"qty": 1}}""") shouldBe mismatch + "field lines is START_OBJECT, not an array"
    record("""{"placed": "2026-11-27 08:15"}""") shouldBe
      mismatch + "field placed is the string '2026-11-27 08:15', not a date-time with an offset (RFC 3339)"
    record("""["a"]""") shouldBe mismatch + "the record is START_ARRAY, not an object"
    record("null") shouldBe mismatch + "the record is null, not a JSON object"
    record("") shouldBe mismatch + "the record is empty, not a JSON object"
    record("""{"id": "a"} {}""") shouldBe mismatch + "the record has more after a JSON object"
    record("""{"id": "a",""") should startWith(
      s"the payload of schema version $V2Id is not JSON: Unexpected end-of-input")
    record("""{"id": "a}""") should startWith(s"the payload of schema version $V2Id is not JSON: ")
  }
}
