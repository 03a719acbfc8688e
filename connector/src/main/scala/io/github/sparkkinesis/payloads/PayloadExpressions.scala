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

  /**
   * `from_glue_schema_registry`: fetches the latest reader schema now unless option `avroSchema` or `protobufSchema`
   * gives it.
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
        GsrOptions.ProtobufSchema,
        GsrOptions.ProtobufMessage))
    val failFast = parsed.choice(GsrOptions.Mode, Seq("PERMISSIVE", "FAILFAST"), "PERMISSIVE") == "FAILFAST"
    val userReader = Seq("AVRO" -> GsrOptions.AvroSchema, "PROTOBUF" -> GsrOptions.ProtobufSchema)
      .flatMap { case (format, option) => parsed.get(option).map(format -> _) }
    if (userReader.size > 1)
      throw new IllegalArgumentException(s"$function: options ${GsrOptions.AvroSchema} and " +
        s"${GsrOptions.ProtobufSchema} are both set; give the reader schema in one of them")
    val (format, reader) = userReader.headOption.getOrElse {
      val latest = new GlueSchemaRegistry(parsed.target).latest(registry, schema)
      if (latest.dataFormat != "AVRO" && latest.dataFormat != "PROTOBUF")
        throw new IllegalArgumentException(s"$function: the latest version of schema '$schema' in registry " +
          s"'$registry' is ${latest.dataFormat}; only AVRO and PROTOBUF are decoded so far.")
      (latest.dataFormat, latest.definition)
    }
    val message = parsed.get(GsrOptions.ProtobufMessage)
    if (message.isDefined && format != "PROTOBUF")
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

  /**
   * Fails now, on the driver, when the reader schema has no Spark struct, or the error column names one of its fields.
   */
  private def checkReader(spec: GsrReadSpec): Unit = {
    val fields = if (spec.dataFormat == "PROTOBUF") {
      // Fails on a definition protobuf refuses, a message it lacks, and what Spark cannot type.
      try new ProtobufReader(spec.readerDefinition, spec.readerMessage).sparkType.fieldNames.toSeq
      catch {
        case e: IllegalArgumentException =>
          throw new IllegalArgumentException(s"from_glue_schema_registry: schema '${spec.schema}': ${e.getMessage}")
      }
    } else {
      val reader = parseAvro("the reader schema", spec.readerDefinition)
      if (reader.getType != Schema.Type.RECORD)
        throw new IllegalArgumentException(s"from_glue_schema_registry: the reader schema of '${spec.schema}' is an " +
          s"Avro ${reader.getType.getName}; it must be a record, whose fields become the struct's")
      AvroToSpark.sparkType(reader) // fails on what Spark cannot type
      reader.getFields.asScala.map(_.name).toSeq
    }
    spec.errorColumn.filter(fields.contains).foreach { name =>
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
