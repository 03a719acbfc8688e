package io.github.sparkkinesis.payloads

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The connector's mapping of a reader JSON Schema (the draft-04 to draft-07 keywords the Glue Schema Registry accepts)
 * to Spark: an object with properties is a struct, one without is a map of its `additionalProperties` schema, `string`
 * (with format `date-time` or `date`), `integer`, `number`, `boolean`, `null` and `array` their Spark types, and a
 * schema that types nothing (`{}`) the value's JSON text. What has no single Spark type is refused with the reason.
 */
private[sparkkinesis] object JsonSchemaToSpark {
  import JsonShape._

  /** The reader of records of the JSON Schema `definition`, which must be an object with properties. */
  def reader(definition: String): Record = {
    val root =
      try GlueHttp.Json.readTree(definition)
      catch { case NonFatal(e) => refuse(s"it is not JSON (${e.getMessage})") }
    if (root == null || !root.isObject) refuse("it is not a JSON object")
    new JsonSchemaToSpark(root).shapeOf(root, "the record", Set.empty) match {
      case record: Record => record
      case other =>
        refuse(s"the record is ${other.sparkType.simpleString}: it must be an object with properties, whose " +
          "properties become the struct's fields")
    }
  }

  private def refuse(why: String): Nothing =
    throw new IllegalArgumentException(s"The reader JSON Schema has no Spark type: $why.")

  private val TypeNames = Seq("object", "array", "string", "integer", "number", "boolean", "null")
}

private final class JsonSchemaToSpark(root: JsonNode) {
  import JsonSchemaToSpark.{refuse, TypeNames}
  import JsonShape._

  /** The shape of the values of `schema`, at `where`; `resolving` holds the $refs being resolved (recursion). */
  def shapeOf(schema: JsonNode, where: String, resolving: Set[String]): JsonShape =
    if (schema.isBoolean) {
      if (schema.asBoolean) AnyJson(where) else refuse(s"$where has schema false, which no value matches")
    } else if (!schema.isObject) refuse(s"$where's schema is ${schema.getNodeType}, not an object or a boolean")
    else if (schema.has("$ref")) referenced(schema.get("$ref").asText, where, resolving)
    else if (schema.has("oneOf")) alternatives("oneOf", schema, where, resolving)
    else if (schema.has("anyOf")) alternatives("anyOf", schema, where, resolving)
    else if (schema.has("allOf")) {
      val all = schema.get("allOf").elements().asScala.toSeq
      if (all.size == 1) shapeOf(all.head, where, resolving)
      else refuse(s"$where combines ${all.size} schemas with allOf; merge them into one schema in the reader")
    } else
      typeOf(schema, where) match {
        case None => AnyJson(where)
        case Some("null") => NullOnly(where)
        case Some("string") =>
          Option(schema.get("format")).map(_.asText) match {
            case Some("date-time") => DateTime(where)
            case Some("date") => CalendarDate(where)
            case _ => Text(where)
          }
        case Some("integer") => WholeNumber(where)
        case Some("number") => RealNumber(where)
        case Some("boolean") => Bool(where)
        case Some("array") => arrayOf(schema, where, resolving)
        case Some("object") => objectOf(schema, where, resolving)
        case Some(other) =>
          refuse(s"$where has type '$other', which is none of ${TypeNames.mkString(", ")}")
      }

  /** The one non-null type `schema` names, or infers from its keywords; None when it types nothing. */
  private def typeOf(schema: JsonNode, where: String): Option[String] = {
    val named = Option(schema.get("type")).map { t =>
      if (t.isArray) t.elements().asScala.map(_.asText).toSeq else Seq(t.asText)
    }
    val types = named.getOrElse(inferred(schema, where))
    types.filter(_ != "null") match {
      case Seq() => types.headOption // "null" alone, or nothing
      case Seq(one) => Some(one)
      case several if several.toSet == Set("integer", "number") => Some("number")
      case several =>
        refuse(s"$where may be any of ${several.mkString(", ")}, which have no common Spark type; give it one type " +
          "(and \"null\")")
    }
  }

  /** The types an untyped schema's keywords imply: object for properties, array for items, an enum's or const's. */
  private def inferred(schema: JsonNode, where: String): Seq[String] =
    if (schema.has("properties") || schema.has("additionalProperties")) Seq("object")
    else if (schema.has("items")) Seq("array")
    else {
      val values = Option(schema.get("enum")).map(_.elements().asScala.toSeq)
        .orElse(Option(schema.get("const")).map(Seq(_))).getOrElse(Seq.empty)
      values.map { v =>
        if (v.isTextual) "string"
        else if (v.isIntegralNumber) "integer"
        else if (v.isNumber) "number"
        else if (v.isBoolean) "boolean"
        else if (v.isNull) "null"
        else refuse(s"$where's enum or const has the value $v: only strings, numbers, booleans and null are typed")
      }.distinct
    }

  private def arrayOf(schema: JsonNode, where: String, resolving: Set[String]): JsonShape =
    Option(schema.get("items")) match {
      case None => ArrayOf(AnyJson(s"$where[]"), where)
      case Some(items) if items.isArray =>
        refuse(s"$where is a tuple (items is an array of schemas); Spark's arrays have one element type")
      case Some(items) => ArrayOf(shapeOf(items, s"$where[]", resolving), where)
    }

  private def objectOf(schema: JsonNode, where: String, resolving: Set[String]): JsonShape = {
    def field(name: String) = if (where == "the record") s"field $name" else s"$where.$name"
    Option(schema.get("properties")) match {
      case Some(properties) if properties.isObject =>
        Record(
          properties.fields().asScala.map(e => e.getKey -> shapeOf(e.getValue, field(e.getKey), resolving)).toSeq,
          where)
      case Some(other) => refuse(s"$where's properties is ${other.getNodeType}, not an object")
      case None =>
        Option(schema.get("additionalProperties")) match {
          case Some(values) if values.isBoolean && !values.asBoolean => Record(Seq.empty, where)
          case Some(values) => MapOf(shapeOf(values, s"$where{}", resolving), where)
          case None => MapOf(AnyJson(s"$where{}"), where)
        }
    }
  }

  /** oneOf or anyOf: the branches' one shape, null branches aside; branches of different Spark types are refused. */
  private def alternatives(keyword: String, schema: JsonNode, where: String, resolving: Set[String]): JsonShape = {
    val shapes = schema.get(keyword).elements().asScala.map(shapeOf(_, where, resolving)).toSeq
    shapes.filterNot(_.isInstanceOf[NullOnly]) match {
      case Seq() => NullOnly(where)
      case nonNull if nonNull.map(_.sparkType).distinct.size == 1 => nonNull.head
      case nonNull =>
        refuse(s"$where is $keyword of ${nonNull.map(_.sparkType.simpleString).mkString(", ")}, which have no " +
          s"common Spark type; keep one type (and null) in the reader schema, or read the field as {} (its JSON text)")
    }
  }

  /** A local reference (`#/definitions/...`, `#/$defs/...`, any JSON pointer into this schema). */
  private def referenced(ref: String, where: String, resolving: Set[String]): JsonShape = {
    if (!ref.startsWith("#")) refuse(s"$where refers to '$ref': only references within the schema (#/...) are followed")
    if (resolving(ref)) refuse(s"$where refers to '$ref' within itself: a recursive schema has no Spark type")
    val target = root.at(ref.substring(1))
    if (target.isMissingNode) refuse(s"$where refers to '$ref', which the schema does not have")
    shapeOf(target, where, resolving + ref)
  }
}
