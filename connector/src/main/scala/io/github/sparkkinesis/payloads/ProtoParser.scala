package io.github.sparkkinesis.payloads

import java.util.Locale

import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.DescriptorProtos._
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.{Label, Type}

/**
 * Parses the .proto source a Glue Schema Registry PROTOBUF version holds into a FileDescriptorProto, for the subset
 * schemas use: proto2 or proto3; package and imports; messages with nested messages and enums; scalar, message and enum
 * fields; optional, required, repeated; map<>; oneof; proto2 defaults, `packed`, `json_name` and enums' `allow_alias`.
 * Other options, `reserved`, `extensions` ranges and services are read past (they do not change how bytes decode);
 * groups, `extend` and editions are refused. Type names stay as written: protobuf resolves them when the descriptor is
 * built, by its own scoping rules.
 */
private[payloads] final class ProtoParser private (tokens: IndexedSeq[ProtoToken]) {
  import ProtoParser._

  private var at = 0
  private var proto3 = false

  private def file(name: String): FileDescriptorProto = {
    val file = FileDescriptorProto.newBuilder().setName(name)
    if (accept("edition")) fail("editions are not supported: use syntax = \"proto2\" or \"proto3\"")
    if (accept("syntax")) {
      expect("=")
      val syntax = text()
      expect(";")
      if (syntax != "proto2" && syntax != "proto3") fail(s"syntax $syntax is neither proto2 nor proto3")
      proto3 = syntax == "proto3"
    }
    while (at < tokens.length) next().text match {
      case ";" =>
      case "import" =>
        if (!accept("public")) accept("weak")
        file.addDependency(text())
        expect(";")
      case "package" =>
        file.setPackage(identifier())
        expect(";")
      case "option" => skipOption()
      case "message" => file.addMessageType(message())
      case "enum" => file.addEnumType(enumeration())
      case "service" =>
        identifier()
        skipBlock()
      case "extend" => fail("extensions (extend) are not supported", back = 1)
      case other => fail("expected message, enum, import, package, option or service", back = 1)
    }
    file.setSyntax(if (proto3) "proto3" else "proto2").build()
  }

  private def message(): DescriptorProto = {
    val message = DescriptorProto.newBuilder().setName(identifier())
    val proto3Optionals = ArrayBuffer[Int]()
    expect("{")
    while (!accept("}")) peek.text match {
      case ";" => next()
      case "message" => next(); message.addNestedType(this.message())
      case "enum" => next(); message.addEnumType(enumeration())
      case "oneof" =>
        next()
        val index = message.getOneofDeclCount
        message.addOneofDecl(OneofDescriptorProto.newBuilder().setName(identifier()))
        expect("{")
        while (!accept("}")) {
          if (accept("option")) skipOption()
          else if (!accept(";")) message.addField(field(None).setOneofIndex(index))
        }
      case "option" => next(); skipOption()
      case "reserved" | "extensions" => skipStatement()
      case "extend" => fail("extensions (extend) are not supported")
      case "map" if tokens.lift(at + 1).exists(_.text == "<") => next(); mapField(message)
      case _ =>
        val label = Seq("optional", "required", "repeated").find(accept)
        if (label.isEmpty && !proto3) fail("a proto2 field needs a label: optional, required or repeated")
        if (label.contains("required") && proto3) fail("proto3 has no required fields", back = 1)
        val built = field(label)
        if (label.contains("optional") && proto3) {
          built.setProto3Optional(true)
          proto3Optionals += message.getFieldCount
        }
        message.addField(built)
    }
    // proto3 optional fields each sit alone in a synthetic oneof, declared after the real ones (as protoc does).
    proto3Optionals.foreach { i =>
      message.getFieldBuilder(i).setOneofIndex(message.getOneofDeclCount)
      message.addOneofDecl(OneofDescriptorProto.newBuilder().setName("_" + message.getField(i).getName))
    }
    message.build()
  }

  /** A field after its label: type, name, number, options. */
  private def field(label: Option[String]): FieldDescriptorProto.Builder = {
    val typeName = identifier()
    if (typeName == "group") fail("groups are not supported", back = 1)
    val field = typed(typeName).setName(identifier())
    expect("=")
    field.setNumber(integer()).setLabel(label match {
      case Some("required") => Label.LABEL_REQUIRED
      case Some("repeated") => Label.LABEL_REPEATED
      case _ => Label.LABEL_OPTIONAL
    })
    fieldOptions(field)
    expect(";")
    field
  }

  /** `map<K, V> name = n;`: a repeated field of a nested entry message, as protobuf defines maps. */
  private def mapField(message: DescriptorProto.Builder): Unit = {
    expect("<")
    val key = identifier()
    if (!MapKeys(key)) fail(s"map key type $key is not an integral type, bool or string", back = 1)
    expect(",")
    val value = identifier()
    expect(">")
    val name = identifier()
    expect("=")
    val field = FieldDescriptorProto.newBuilder().setName(name).setNumber(integer()).setLabel(Label.LABEL_REPEATED)
      .setType(Type.TYPE_MESSAGE).setTypeName(entryName(name))
    fieldOptions(field)
    expect(";")
    message.addNestedType(DescriptorProto.newBuilder().setName(entryName(name))
      .setOptions(MessageOptions.newBuilder().setMapEntry(true))
      .addField(typed(key).setName("key").setNumber(1).setLabel(Label.LABEL_OPTIONAL))
      .addField(typed(value).setName("value").setNumber(2).setLabel(Label.LABEL_OPTIONAL)))
    message.addField(field)
  }

  /** `[name = value, ...]`: default, packed and json_name kept; other options read past. */
  private def fieldOptions(field: FieldDescriptorProto.Builder): Unit =
    if (accept("[")) {
      do {
        val name = optionName()
        name match {
          case "default" => field.setDefaultValue(constant())
          case "packed" => field.setOptions(field.getOptions.toBuilder.setPacked(constant() == "true"))
          case "json_name" => field.setJsonName(constant())
          case _ => constant()
        }
      } while (accept(","))
      expect("]")
    }

  private def enumeration(): EnumDescriptorProto = {
    val enumeration = EnumDescriptorProto.newBuilder().setName(identifier())
    expect("{")
    while (!accept("}")) {
      if (accept("option")) {
        if (optionName() == "allow_alias")
          enumeration.setOptions(EnumOptions.newBuilder().setAllowAlias(constant() == "true"))
        else constant()
        expect(";")
      } else if (peek.text == "reserved") skipStatement()
      else if (!accept(";")) {
        val value = EnumValueDescriptorProto.newBuilder().setName(identifier())
        expect("=")
        val negative = accept("-")
        value.setNumber(if (negative) -integer() else integer())
        if (accept("[")) {
          do { optionName(); constant() } while (accept(","))
          expect("]")
        }
        expect(";")
        enumeration.addValue(value)
      }
    }
    enumeration.build()
  }

  /** A field of `typeName`: a scalar's type set; a message or enum left for protobuf to resolve by name. */
  private def typed(typeName: String): FieldDescriptorProto.Builder = {
    val field = FieldDescriptorProto.newBuilder()
    Scalars.get(typeName).fold(field.setTypeName(typeName))(field.setType)
  }

  /** An option's name up to its `=`: `name`, `(custom.option)` or `(custom).field`. */
  private def optionName(): String = {
    val name = new StringBuilder
    while (peek.text != "=") name ++= next().text
    expect("=")
    name.toString
  }

  /** An option's value as protobuf's default_value wants it; an aggregate `{...}` read past (gives ""). */
  private def constant(): String = peek.text match {
    case "{" => skipBlock(); ""
    case "-" | "+" => next().text.replace("+", "") + next().text
    case _ if peek.kind == ProtoToken.Text =>
      val parts = new StringBuilder
      while (at < tokens.length && peek.kind == ProtoToken.Text) parts ++= next().text
      parts.toString
    case _ => next().text
  }

  private def skipOption(): Unit = { optionName(); constant(); expect(";") }

  /** Everything up to the `;` that ends the statement, past brackets and braces. */
  private def skipStatement(): Unit = {
    var depth = 0
    while (depth > 0 || peek.text != ";") next().text match {
      case "{" | "[" | "(" => depth += 1
      case "}" | "]" | ")" => depth -= 1
      case _ =>
    }
    next()
  }

  /** A `{ ... }` block, nested blocks included. */
  private def skipBlock(): Unit = {
    expect("{")
    var depth = 1
    while (depth > 0) next().text match {
      case "{" => depth += 1
      case "}" => depth -= 1
      case _ =>
    }
  }

  private def identifier(): String =
    if (peek.kind == ProtoToken.Identifier) next().text else fail("expected a name")

  private def text(): String = if (peek.kind == ProtoToken.Text) next().text else fail("expected a quoted string")

  private def integer(): Int = {
    val token = peek
    if (token.kind != ProtoToken.Number) fail("expected a number")
    next()
    val t = token.text.toLowerCase(Locale.ROOT)
    try {
      if (t.startsWith("0x")) java.lang.Long.parseLong(t.drop(2), 16).toInt
      else if (t.length > 1 && t.startsWith("0")) java.lang.Long.parseLong(t.drop(1), 8).toInt
      else Integer.parseInt(t)
    } catch { case _: NumberFormatException => fail("expected an integer", back = 1) }
  }

  private def peek: ProtoToken =
    if (at < tokens.length) tokens(at) else fail("the definition ends early")

  private def next(): ProtoToken = { val t = peek; at += 1; t }

  private def accept(text: String): Boolean =
    if (at < tokens.length && tokens(at).text == text && tokens(at).kind != ProtoToken.Text) { at += 1; true }
    else false

  private def expect(text: String): Unit = if (!accept(text)) fail(s"expected '$text'")

  private def fail(what: String, back: Int = 0): Nothing = {
    val token = tokens.lift(at - back)
    throw new IllegalArgumentException(token.fold(s"at the end: $what")(t => s"line ${t.line}: $what at '${t.text}'"))
  }
}

private[payloads] object ProtoParser {

  /** `source` as a FileDescriptorProto named `name`; fails with a message naming the line. */
  def parse(source: String, name: String): FileDescriptorProto = new ProtoParser(ProtoTokens(source)).file(name)

  private val Scalars: Map[String, Type] = Map(
    "double" -> Type.TYPE_DOUBLE,
    "float" -> Type.TYPE_FLOAT,
    "int32" -> Type.TYPE_INT32,
    "int64" -> Type.TYPE_INT64,
    "uint32" -> Type.TYPE_UINT32,
    "uint64" -> Type.TYPE_UINT64,
    "sint32" -> Type.TYPE_SINT32,
    "sint64" -> Type.TYPE_SINT64,
    "fixed32" -> Type.TYPE_FIXED32,
    "fixed64" -> Type.TYPE_FIXED64,
    "sfixed32" -> Type.TYPE_SFIXED32,
    "sfixed64" -> Type.TYPE_SFIXED64,
    "bool" -> Type.TYPE_BOOL,
    "string" -> Type.TYPE_STRING,
    "bytes" -> Type.TYPE_BYTES)

  private val MapKeys: Set[String] = Scalars.keySet -- Set("double", "float", "bytes")

  /**
   * The name of a map field's entry message, as AWS's Glue Schema Registry serde names it (its message indices count
   * entries): a snake_case name in UpperCamelCase, another with its first letter upper-cased; then "Entry".
   */
  def entryName(field: String): String = {
    def capitalized(word: String) = word.take(1).toUpperCase(Locale.ROOT) + word.drop(1)
    val camel =
      if (field.contains("_")) field.split("_").map(w => capitalized(w.toLowerCase(Locale.ROOT))).mkString
      else capitalized(field)
    camel + "Entry"
  }
}
