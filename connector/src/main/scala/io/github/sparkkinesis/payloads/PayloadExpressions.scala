package io.github.sparkkinesis.payloads

import org.apache.avro.Schema
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

  /** `from_glue_schema_registry`: fetches the latest reader schema now unless option `avroSchema` gives it. */
  def fromGlueSchemaRegistry(
      data: Expression,
      registry: String,
      schema: String,
      options: Map[String, String]): Expression = {
    val function = "from_glue_schema_registry"
    val parsed = new GsrOptions(function, options, Seq(GsrOptions.Mode, GsrOptions.ErrorColumn, GsrOptions.AvroSchema))
    val failFast = parsed.choice(GsrOptions.Mode, Seq("PERMISSIVE", "FAILFAST"), "PERMISSIVE") == "FAILFAST"
    val reader = parsed.get(GsrOptions.AvroSchema).getOrElse {
      val latest = new GlueSchemaRegistry(parsed.target).latest(registry, schema)
      if (latest.dataFormat != "AVRO")
        throw new IllegalArgumentException(s"$function: the latest version of schema '$schema' in registry " +
          s"'$registry' is ${latest.dataFormat}; only AVRO is decoded so far.")
      latest.definition
    }
    val spec = GsrReadSpec(parsed.target, registry, schema, reader, failFast, parsed.get(GsrOptions.ErrorColumn))
    checkReader(spec)
    FromGlueSchemaRegistry(data, spec)
  }

  /** `to_glue_schema_registry`, with option `avroSchema` (when given) parsed now, on the driver. */
  def toGlueSchemaRegistry(
      struct: Expression,
      registry: String,
      schema: String,
      options: Map[String, String]): Expression = {
    val parsed = new GsrOptions(
      "to_glue_schema_registry",
      options,
      Seq(GsrOptions.AvroSchema, GsrOptions.Compression, GsrOptions.AutoRegister))
    val spec = GsrWriteSpec(
      parsed.target,
      registry,
      schema,
      parsed.get(GsrOptions.AvroSchema).map { definition =>
        parseAvro(GsrOptions.AvroSchema, definition)
        definition
      },
      parsed.choice(GsrOptions.AutoRegister, Seq("TRUE", "FALSE"), "FALSE") == "TRUE",
      parsed.choice(GsrOptions.Compression, Seq("NONE", "ZLIB"), "NONE") == "ZLIB")
    ToGlueSchemaRegistry(struct, spec)
  }

  /** Fails now, on the driver, when the reader schema is no record, or the error column names one of its fields. */
  private def checkReader(spec: GsrReadSpec): Unit = {
    val reader = parseAvro("the reader schema", spec.readerDefinition)
    if (reader.getType != Schema.Type.RECORD)
      throw new IllegalArgumentException(s"from_glue_schema_registry: the reader schema of '${spec.schema}' is an " +
        s"Avro ${reader.getType.getName}; it must be a record, whose fields become the struct's")
    AvroToSpark.sparkType(reader) // fails on what Spark cannot type
    spec.errorColumn.filter(name => reader.getFields.asScala.exists(_.name == name)).foreach { name =>
      throw new IllegalArgumentException(s"from_glue_schema_registry: option errorColumn '$name' is a field of the " +
        "reader schema; choose another name")
    }
  }

  private def parseAvro(what: String, definition: String): Schema =
    try new Schema.Parser().parse(definition)
    catch {
      case e: org.apache.avro.SchemaParseException =>
        throw new IllegalArgumentException(s"$what is not a valid Avro schema (${e.getMessage}): $definition", e)
    }
}
