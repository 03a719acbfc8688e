package io.github.sparkkinesis.payloads

import scala.io.Source

import com.google.protobuf.{ApiProto, DescriptorProtos, StructProto, TimestampProto, TypeProto, WrappersProto}
import com.google.protobuf.Descriptors.{Descriptor, EnumDescriptor, FileDescriptor}
import com.google.protobuf.Descriptors.FieldDescriptor.JavaType
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The .proto parser, against protoc's own work: protobuf-java carries the well-known types' .proto sources and the
 * descriptors protoc compiled from them, which must describe the same messages, fields and enums.
 */
class ProtoParserSuite extends AnyFunSuite with Matchers {

  private def source(name: String): String = {
    val in = getClass.getResourceAsStream(s"/$name")
    try Source.fromInputStream(in, "UTF-8").mkString
    finally in.close()
  }

  /** What decides how bytes decode, one line per message, field, enum and value: for comparing files. */
  private def described(file: FileDescriptor): Seq[String] = {
    def enumeration(e: EnumDescriptor): Seq[String] =
      s"enum ${e.getFullName}" +: e.getValues.asScala.map(v => s"  ${v.getName} = ${v.getNumber}").toSeq
    def message(m: Descriptor): Seq[String] =
      (s"message ${m.getFullName} mapEntry=${m.getOptions.getMapEntry}" +: m.getFields.asScala.map { f =>
        val target = f.getJavaType match {
          case JavaType.MESSAGE => f.getMessageType.getFullName
          case JavaType.ENUM => f.getEnumType.getFullName
          case _ => ""
        }
        val default = if (f.hasDefaultValue) s" default=${f.getDefaultValue}" else ""
        val oneof = Option(f.getRealContainingOneof).fold("")(o => s" oneof=${o.getName}")
        s"  ${f.getName} = ${f.getNumber} ${f.toProto.getLabel} ${f.getType} $target$default$oneof " +
          s"presence=${f.hasPresence}"
      }.toSeq) ++ m.getEnumTypes.asScala.flatMap(enumeration) ++ m.getNestedTypes.asScala.flatMap(message)
    file.getMessageTypes.asScala.flatMap(message).toSeq ++ file.getEnumTypes.asScala.flatMap(enumeration)
  }

  private def parsed(definition: String): ProtoSchema =
    ProtoSchema.parse(definition).fold(reason => fail(reason), identity)

  test("Given the sources of protobuf's well-known types, when parsed, then each describes what protoc compiled " +
    "(proto2 defaults, enums, nested types, oneofs, maps, imports, options and reserved ranges read past)") {
    val compiled = Seq(
      DescriptorProtos.getDescriptor,
      StructProto.getDescriptor,
      TypeProto.getDescriptor,
      ApiProto.getDescriptor,
      TimestampProto.getDescriptor,
      WrappersProto.getDescriptor)
    compiled.foreach { file =>
      val ours = parsed(source(file.getName)).file
      withClue(file.getName) {
        described(ours) shouldBe described(file)
        described(ours) should not be empty
      }
    }
  }

  test("Given a definition, then its message indices count nested messages and map entries (named as AWS's serde " +
    "names them), in the order of full names") {
    val schema = parsed(
      """syntax = "proto3";
        |package shop;
        |message B { message C {} message A { message D {} } map<string, int32> user_tags = 1; }
        |message Alpha { optional string note = 1; }""".stripMargin)
    schema.byIndex.map(_.getFullName) shouldBe
      Seq("shop.Alpha", "shop.B", "shop.B.A", "shop.B.A.D", "shop.B.C", "shop.B.UserTagsEntry")
    schema.message(None).getFullName shouldBe "shop.B"
    schema.message(Some("B.A")).getFullName shouldBe "shop.B.A"
    schema.message(Some(".shop.Alpha")).getFullName shouldBe "shop.Alpha"
    the[IllegalArgumentException] thrownBy schema.message(Some("Gamma")) should have message
      "the definition has no message 'Gamma'; its messages are shop.Alpha, shop.B, shop.B.A, shop.B.A.D, shop.B.C, " +
      "shop.B.UserTagsEntry"
    val note = schema.message(Some("Alpha")).findFieldByName("note")
    (note.hasPresence, note.getContainingOneof.getName, note.getRealContainingOneof) shouldBe (true, "_note", null)
    ProtoParser.entryName("tags") shouldBe "TagsEntry"
    ProtoParser.entryName("user_TAGS") shouldBe "UserTagsEntry"
  }

  test("Given what the parser does not take, then it refuses naming the line and what to do") {
    def refused(definition: String): String = ProtoSchema.parse(definition).left.toOption.getOrElse(fail(definition))
    refused("edition = \"2023\";\nmessage A {}") should include("editions are not supported")
    refused("syntax = \"proto2\";\nmessage A {\n  optional group G = 1 { optional int32 x = 2; }\n}") shouldBe
      "line 3: groups are not supported at 'group'"
    refused("syntax = \"proto2\";\nmessage A { extensions 100 to 200; }\nextend A { optional int32 x = 100; }") should
      include("line 3: extensions (extend) are not supported")
    refused("syntax = \"proto3\";\nimport \"shop/common.proto\";\nmessage A {}") should
      (include("import shop/common.proto is not supported") and include("google/protobuf/timestamp.proto"))
    refused("syntax = \"proto3\";\nmessage A {\n  string id = 1\n}") shouldBe "line 4: expected ';' at '}'"
    refused("syntax = \"proto3\";\nmessage A { Missing m = 1; }") should include("Missing")
    refused("syntax = \"proto3\";\nmessage A { string a = 1; string b = 1; }") should include("1")
    refused("syntax = \"proto3\";\nmessage A { string a = 1; } #") shouldBe "line 2: unexpected character '#'"
    refused("syntax = \"proto3\";\nmessage A {") shouldBe "at the end: the definition ends early"
  }
}
