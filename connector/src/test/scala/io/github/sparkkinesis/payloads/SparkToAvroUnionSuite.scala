package io.github.sparkkinesis.payloads

import org.apache.avro.Schema
import org.apache.avro.generic.GenericRecord
import org.apache.avro.io.DecoderFactory
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** to_glue_schema_registry's writing of general Avro unions: the rules of SparkToAvroUnion, through Avro and back. */
class SparkToAvroUnionSuite extends AnyFunSuite with Matchers {

  /** A record whose field `v` is the union `branches` (JSON types), optionally preceded by null. */
  private def writer(branches: String): Schema = new Schema.Parser().parse(
    s"""{"type":"record","name":"Event","namespace":"shop","fields":[{"name":"v","type":[$branches]}]}""")

  private val union = writer(
    """"null","string","long",{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}""")

  /** `value` (field `v`) written as `schema`, through Avro bytes, read back as from_glue_schema_registry maps it. */
  private def roundTrip(schema: Schema, valueType: DataType, value: Any): InternalRow = {
    val struct = StructType(Seq(StructField("v", valueType)))
    val datum = SparkToAvro.converter(schema, struct)(InternalRow(value)).asInstanceOf[GenericRecord]
    val bytes = GsrTestData.avro(datum)
    AvroToSpark.reader(schema)(DecoderFactory.get().binaryDecoder(bytes, null)).asInstanceOf[InternalRow]
  }

  private def s(text: String) = UTF8String.fromString(text)

  test("Given the struct from_glue_schema_registry reads such a union as, then each value is written as the branch " +
    "of its one non-null field and reads back as the same struct") {
    // Given the union's Spark type as the reader maps it: one field per branch, named after the branch's type
    val asRead = AvroToSpark.sparkType(union).asInstanceOf[StructType]("v").dataType.asInstanceOf[StructType]
    asRead.fieldNames.toSeq shouldBe Seq("string", "long", "Order")
    // When values of each branch, and one of none, are written and read back
    val values = Seq(
      InternalRow(s("text"), null, null),
      InternalRow(null, 7L, null),
      InternalRow(null, null, InternalRow(s("o-1"))),
      InternalRow(null, null, null))
    val back = values.map(v => roundTrip(union, asRead, v).get(0, asRead))
    // Then each is the struct written (none set: null, the union's null branch)
    back.take(3).map(_.asInstanceOf[InternalRow].toSeq(asRead)) shouldBe
      Seq(Seq(s("text"), null, null), Seq(null, 7L, null), Seq(null, null, InternalRow(s("o-1"))))
    back(3) shouldBe null
  }

  test("Given Spark's from_avro naming (member0, member1, ...), then the branches are matched by position") {
    val members = StructType(Seq(StructField("member1", LongType), StructField("member0", StringType)))
    val asRead = AvroToSpark.sparkType(union).asInstanceOf[StructType]("v").dataType.asInstanceOf[StructType]
    roundTrip(union, members, InternalRow(42L, null)).getStruct(0, 3).toSeq(asRead) shouldBe Seq(null, 42L, null)
  }

  test("Given a value that exactly one branch can hold, then it is written as that branch") {
    roundTrip(union, StringType, s("plain")).getStruct(0, 3).getUTF8String(0) shouldBe s("plain")
  }

  test("Given a value no branch or several branches can hold, or a struct with two branches set, then it is refused " +
    "saying how to write the union") {
    def refusal(schema: Schema, valueType: DataType, value: Any): String =
      intercept[IllegalArgumentException](roundTrip(schema, valueType, value)).getMessage
    val howTo = "write a struct with one field per branch (string, long, Order, or member0 to member2), the branch " +
      "to write its one non-null field"
    // An int is no long: Avro's writer does not promote, so no branch holds it
    refusal(union, IntegerType, 5) should (include("no branch of the Avro union") and include("Spark's int") and
      include(howTo))
    val stringOrEnum = writer(""""string",{"type":"enum","name":"Colour","symbols":["RED"]}""")
    refusal(stringOrEnum, StringType, s("RED")) should include("branches string and Colour of the Avro union")
    val members = StructType(Seq(StructField("string", StringType), StructField("long", LongType)))
    refusal(union, members, InternalRow(s("a"), 1L)) should
      include("has fields string and long set; set only the one of the branch to write")
  }
}
