package io.github.sparkkinesis.payloads

import java.util.UUID

import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.payloads.GsrTestData._

/** The GSR Avro decoder: frames, writer versions resolved against the reader by Avro's rules, and every bad input. */
class GsrAvroDecoderSuite extends AnyFunSuite with Matchers {

  private val v1 = SchemaVersion(V1Id, V1.toString, "AVRO")
  private val v2 = SchemaVersion(V2Id, V2.toString, "AVRO")

  private def decoder(registry: Registry, reader: org.apache.avro.Schema = V2) =
    new GsrAvroDecoder(registry.target, reader, registry.lookup)

  private def s(text: String) = UTF8String.fromString(text)

  test("Given records of two versions, when read with version 2 as reader, then version 1's are resolved by Avro's " +
    "rules (int widened to long, removed field dropped, added field's default) and version 2's read as written") {
    val registry = new Registry(v1, v2)
    val d = decoder(registry)
    fields(d.decode(GsrFrame.write(V1Id, avro(order1("a", 7, "gift")), zlib = false)).toOption.get) shouldBe
      Seq(s("a"), 7L, s("EUR"))
    fields(d.decode(GsrFrame.write(V2Id, avro(order2("b", 1L << 40, "USD")), zlib = true)).toOption.get) shouldBe
      Seq(s("b"), 1L << 40, s("USD"))
    fields(d.decode(GsrFrame.write(V1Id, avro(order1("c", 8, null)), zlib = true)).toOption.get) shouldBe
      Seq(s("c"), 8L, s("EUR"))
    registry.fetches shouldBe 2
  }

  test("Given a writer version with the reader's fields in another order and a field the reader lacks between them, " +
    "then each value lands in the reader's field, the lacking one skipped") {
    // Given a writer that puts currency first, an extra field next, and amount as an int before id
    val v3Id = UUID.fromString("33333333-2222-3333-4444-555555555555")
    val v3 = new org.apache.avro.Schema.Parser().parse(
      """{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"currency","type":"string"},
        |{"name":"extra","type":{"type":"array","items":"long"}},{"name":"amount","type":"int"},
        |{"name":"id","type":"string"}]}""".stripMargin)
    val record = new org.apache.avro.generic.GenericData.Record(v3)
    record.put("currency", "USD")
    record.put("extra", java.util.Arrays.asList(1L, 2L))
    record.put("amount", 5)
    record.put("id", "x")
    val d = decoder(new Registry(SchemaVersion(v3Id, v3.toString, "AVRO")))
    // When its records are read with version 2 as reader, twice (the second through the same resolving decoder)
    val framed = GsrFrame.write(v3Id, avro(record), zlib = false)
    val rows = Seq(d.decode(framed), d.decode(framed)).map(r => fields(r.toOption.get))
    // Then each has the reader's fields in the reader's order
    rows shouldBe Seq.fill(2)(Seq(s("x"), 5L, s("USD")))
  }

  test("Given a timestamp in milliseconds beyond Spark's range, then the record fails saying the value does not fit") {
    val schema = new org.apache.avro.Schema.Parser().parse(
      """{"type":"record","name":"Event","fields":[
        |{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}]}""".stripMargin)
    val id = UUID.fromString("44444444-2222-3333-4444-555555555555")
    val record = new org.apache.avro.generic.GenericData.Record(schema)
    record.put("at", Long.MaxValue / 10)
    val failure = decoder(new Registry(SchemaVersion(id, schema.toString, "AVRO")), schema)
      .decode(GsrFrame.write(id, avro(record), zlib = false))
    failure.left.toOption.get shouldBe DecodeFailure(
      Some(id),
      s"a value of schema version $id does not fit its Spark type: long overflow")
  }

  test("Given a version that cannot be had for a while, when it can be had again, then it is decoded: the decoder " +
    "keeps only the versions it had, and leaves when to ask again to its lookup") {
    val registry = new Registry(v1)
    registry.down = true
    val d = decoder(registry)
    val record = GsrFrame.write(V1Id, avro(order1("a", 1, null)), zlib = false)
    d.decode(record).left.toOption.get.reason should include("cannot be fetched: GetSchemaVersion failed: throttled")
    registry.down = false
    fields(d.decode(record).toOption.get) shouldBe Seq(s("a"), 1L, s("EUR"))
    d.decode(record).isRight shouldBe true
    registry.fetches shouldBe 1
  }

  test("Given a reader that a writer version cannot be resolved against, then the record fails naming the field") {
    val registry = new Registry(v2)
    // Version 2 has no default for note-less readers' new field "priority": resolution must refuse.
    val reader = new org.apache.avro.Schema.Parser().parse(
      """{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"},
        |{"name":"priority","type":"int"}]}""".stripMargin)
    val failure = decoder(registry, reader).decode(GsrFrame.write(V2Id, avro(order2("a", 1, "EUR")), zlib = false))
    failure.left.toOption.get shouldBe a[DecodeFailure]
    failure.left.toOption.get.versionId shouldBe Some(V2Id)
    failure.left.toOption.get.reason should (include("cannot be read as the reader schema") and include("priority"))
  }

  test("every bad input gives a failure naming what is wrong, and the version id when the frame has one") {
    val registry = new Registry(v1, v2)
    val d = decoder(registry)
    val good = GsrFrame.write(V2Id, avro(order2("a", 1, "EUR")), zlib = false)
    val unknown = UUID.fromString("11111111-2222-3333-4444-555555555555")
    def reason(bytes: Array[Byte]): (Option[UUID], String) = {
      val failure = d.decode(bytes).left.toOption.getOrElse(fail(s"decoded ${bytes.mkString(",")}"))
      (failure.versionId, failure.reason)
    }
    reason(Array[Byte](3, 0, 1)) shouldBe
      (None, "a Glue Schema Registry frame has at least 18 bytes, this record has 3")
    reason(good.updated(0, 2.toByte))._2 should include("the first byte is 2, not 3")
    reason(good.updated(1, 1.toByte)) shouldBe (Some(V2Id), "compression byte 1 is neither 0 (none) nor 5 (zlib)")
    reason(good.updated(1, 5.toByte))._2 should include("the zlib-compressed payload is corrupt")
    val zlib = GsrFrame.write(V2Id, avro(order2("a", 1, "EUR")), zlib = true)
    reason(zlib.dropRight(3))._2 shouldBe "the zlib-compressed payload is truncated"
    reason(GsrFrame.write(unknown, avro(order2("a", 1, "EUR")), zlib = false)) shouldBe
      (Some(unknown), s"schema version $unknown is not in the registry")
    reason(good.dropRight(2))._2 should include(s"the payload is not Avro of schema version $V2Id")
    reason(good :+ 0.toByte)._2 shouldBe s"the payload has bytes left after the record of schema version $V2Id"
  }

  test("Given a version of another data format, then its records fail saying the reader schema is Avro") {
    val json = SchemaVersion(UUID.fromString("22222222-2222-3333-4444-555555555555"), "{}", "JSON")
    val failure = decoder(new Registry(json)).decode(GsrFrame.write(json.id, "{}".getBytes("UTF-8"), zlib = false))
    failure.left.toOption.get.reason shouldBe s"schema version ${json.id} is JSON, and the reader schema is Avro"
  }
}
