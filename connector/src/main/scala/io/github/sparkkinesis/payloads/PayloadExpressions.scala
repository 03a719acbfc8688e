package io.github.sparkkinesis.payloads

import scala.util.Try

import org.apache.avro.Schema
import org.apache.spark.sparkkinesis.ExpressionColumns
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The payload functions as Catalyst expressions, with their arguments checked on the driver: what the Column API
 * ([[functions]]) wraps and the SQL functions ([[PayloadSqlFunctions]]) return.
 */
private[sparkkinesis] object PayloadExpressions {

  def cloudwatchLogs(data: Expression, mode: String): Expression =
    CloudWatchLogs(data, PayloadMode.parse(mode, "cloudwatch_logs"))

  def dynamodbChange(data: Expression, itemSchema: StructType, mode: String): Expression =
    DynamoDbChange(data, itemSchema, PayloadMode.parse(mode, "dynamodb_change"))

  def decompress(data: Expression, codec: String, mode: String): Expression =
    Decompress(data, Codec.parse(codec), PayloadMode.parse(mode, "decompress"))

  /** An item schema given as a DDL string (`"pk STRING, price DECIMAL(10,2)"`) or as Spark's JSON of a struct. */
  def itemSchema(schema: String): StructType = {
    val parsed =
      if (schema != null && schema.trim.startsWith("{")) DataType.fromJson(schema)
      else StructType.fromDDL(schema)
    parsed match {
      case struct: StructType => struct
      case other =>
        throw new IllegalArgumentException(
          s"dynamodb_change: the item schema must be a struct, not ${other.simpleString}")
    }
  }

  /**
   * `from_glue_schema_registry`: fetches the latest reader schema now unless option `avroSchema`, `jsonSchema` or
   * `protobufSchema` gives it.
   */
  def fromGlueSchemaRegistry(
      data: Expression,
      registry: String,
      schema: String,
      options: Map[String, String]): Expression = {
    val function = "from_glue_schema_registry"
    val parsed = new GsrOptions(
      function,
      options,
      Seq(
        GsrOptions.Mode,
        GsrOptions.ErrorColumn,
        GsrOptions.AvroSchema,
        GsrOptions.JsonSchema,
        GsrOptions.ProtobufSchema,
        GsrOptions.ProtobufMessage))
    val failFast = parsed.choice(GsrOptions.Mode, Seq("PERMISSIVE", "FAILFAST"), "PERMISSIVE") == "FAILFAST"
    val (format, reader) = onlySchema(function, "reader", parsed).getOrElse {
      val latest = new GlueSchemaRegistry(parsed.target).latest(registry, schema)
      if (!GsrReadSpec.Formats.contains(latest.dataFormat))
        throw new IllegalArgumentException(s"$function: the latest version of schema '$schema' in registry " +
          s"'$registry' is ${latest.dataFormat}; only ${GsrReadSpec.Formats.mkString(", ")} are decoded.")
      (latest.dataFormat, latest.definition)
    }
    val message = parsed.get(GsrOptions.ProtobufMessage)
    if (message.isDefined && format != GsrReadSpec.Protobuf)
      throw new IllegalArgumentException(s"$function: option ${GsrOptions.ProtobufMessage} is for Protobuf schemas; " +
        s"the reader schema of '$schema' is $format")
    val spec = GsrReadSpec(
      parsed.target,
      registry,
      schema,
      format,
      reader,
      message,
      failFast,
      parsed.get(GsrOptions.ErrorColumn))
    checkReader(spec)
    FromGlueSchemaRegistry(data, spec)
  }

  /**
   * `to_glue_schema_registry`, with option `avroSchema`, `jsonSchema` or `protobufSchema` (when given) checked now, on
   * the driver.
   */
  def toGlueSchemaRegistry(
      struct: Expression,
      registry: String,
      schema: String,
      options: Map[String, String]): Expression = {
    val function = "to_glue_schema_registry"
    val parsed = new GsrOptions(
      function,
      options,
      Seq(
        GsrOptions.AvroSchema,
        GsrOptions.JsonSchema,
        GsrOptions.ProtobufSchema,
        GsrOptions.ProtobufMessage,
        GsrOptions.Compression,
        GsrOptions.AutoRegister))
    val writer = onlySchema(function, "writer", parsed)
    val message = parsed.get(GsrOptions.ProtobufMessage)
    if (message.isDefined && !writer.exists(_._1 == GsrReadSpec.Protobuf))
      throw new IllegalArgumentException(s"$function: option ${GsrOptions.ProtobufMessage} names a message of the " +
        s"Protobuf writer schema; give that schema as option ${GsrOptions.ProtobufSchema}.")
    val spec = GsrWriteSpec(
      parsed.target,
      registry,
      schema,
      writer.collect { case (GsrReadSpec.Avro, definition) =>
        parseAvro(GsrOptions.AvroSchema, definition) // checked now, on the driver
        definition
      },
      parsed.choice(GsrOptions.AutoRegister, Seq("TRUE", "FALSE"), "FALSE") == "TRUE",
      parsed.choice(GsrOptions.Compression, Seq("NONE", "ZLIB"), "NONE") == "ZLIB")
    writer match {
      case Some((GsrReadSpec.Json, definition)) =>
        if (!Try(GlueHttp.Json.readTree(definition)).toOption.exists(node => node != null && node.isObject))
          throw new IllegalArgumentException(
            s"$function: option ${GsrOptions.JsonSchema} is not a JSON object, as a JSON Schema is: $definition")
        // Spark's own writer: fields by name, nulls as null (a schema's required nullable properties are there),
        // timestamps as RFC 3339 in UTC with microseconds (the same whatever the session's time zone), dates
        // yyyy-MM-dd, binary as base64.
        val json = org.apache.spark.sql.functions.to_json(
          ExpressionColumns.column(struct),
          Map(
            "ignoreNullFields" -> "false",
            "timeZone" -> "UTC",
            "timestampFormat" -> "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"))
        ToGlueSchemaRegistryJson(ExpressionColumns.expression(json), spec, definition)
      case Some((GsrReadSpec.Protobuf, definition)) =>
        try new ProtobufWriter(definition, message) // checked now, on the driver
        catch {
          case e: IllegalArgumentException => throw new IllegalArgumentException(s"$function: ${e.getMessage}", e)
        }
        ToGlueSchemaRegistryProtobuf(struct, spec, definition, message)
      case _ => ToGlueSchemaRegistry(struct, spec)
    }
  }

  /**
   * Fails now, on the driver, when the reader schema has no Spark struct, or the error column names one of its fields.
   */
  private def checkReader(spec: GsrReadSpec): Unit = {
    if (spec.dataFormat == GsrReadSpec.Avro) {
      val reader = parseAvro("the reader schema", spec.readerDefinition)
      if (reader.getType != Schema.Type.RECORD)
        throw new IllegalArgumentException(s"from_glue_schema_registry: the reader schema of '${spec.schema}' is an " +
          s"Avro ${reader.getType.getName}; it must be a record, whose fields become the struct's")
    }
    val fields =
      try GsrReadSpec.readerType(spec)
      catch {
        case e: IllegalArgumentException =>
          throw new IllegalArgumentException(
            s"from_glue_schema_registry: the reader schema of '${spec.schema}' " +
              s"(registry '${spec.registry}'): ${e.getMessage}",
            e)
      }
    spec.errorColumn.filter(fields.fieldNames.contains).foreach { name =>
      throw new IllegalArgumentException(s"from_glue_schema_registry: option errorColumn '$name' is a field of the " +
        "reader schema; choose another name")
    }
  }

  /**
   * The `role` (reader or writer) schema's data format and definition when an option gives it; fails when more than one
   * does.
   */
  private def onlySchema(function: String, role: String, parsed: GsrOptions): Option[(String, String)] = {
    val given = Seq(
      GsrReadSpec.Avro -> GsrOptions.AvroSchema,
      GsrReadSpec.Json -> GsrOptions.JsonSchema,
      GsrReadSpec.Protobuf -> GsrOptions.ProtobufSchema).flatMap { case (format, option) =>
      parsed.get(option).map(definition => (option, (format, definition)))
    }
    if (given.size > 1) {
      val names = given.map(_._1)
      val all = if (names.size == 2) "both" else "all"
      throw new IllegalArgumentException(s"$function: options ${names.init.mkString(", ")} and ${names.last} are " +
        s"$all set; give the $role schema in the one of its data format.")
    }
    given.headOption.map(_._2)
  }

  private def parseAvro(what: String, definition: String): Schema =
    try new Schema.Parser().parse(definition)
    catch {
      case e: org.apache.avro.SchemaParseException =>
        throw new IllegalArgumentException(s"$what is not a valid Avro schema (${e.getMessage}): $definition", e)
    }
}
