package io.github.sparkkinesis.payloads

import scala.util.Try

import org.apache.avro.Schema
import org.apache.spark.sparkkinesis.ExpressionColumns
import org.apache.spark.sql.Column
import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * Decoders (and an encoder) of what Kinesis records commonly carry, as column functions over the source's binary `data`
 * column. Each takes a `mode`: PERMISSIVE (the default) gives null for a record it cannot decode (with the reason in
 * the result's `error` field, or the field an option names, where it has one), FAILFAST fails the task with the reason.
 */
// scalastyle:off object.name
object functions {
  // scalastyle:on object.name

  // ---- CloudWatch Logs, DynamoDB change records, compressed payloads ----

  /**
   * A CloudWatch Logs subscription record as `messageType, owner, logGroup, logStream, subscriptionFilters, logEvents:
   * array<struct<id, timestamp, message>>, error`; gzip-compressed (as subscriptions deliver it) or not. CloudWatch
   * Logs sends a `CONTROL_MESSAGE` to check that the stream is reachable: keep `messageType = 'DATA_MESSAGE'` to drop
   * it.
   */
  def cloudwatch_logs(data: Column): Column = cloudwatch_logs(data, PayloadMode.Permissive.name)

  /** [[cloudwatch_logs(data:org\.apache\.spark\.sql\.Column)* cloudwatch_logs]] in `mode` (PERMISSIVE or FAILFAST). */
  def cloudwatch_logs(data: Column, mode: String): Column =
    column(CloudWatchLogs(expression(data), PayloadMode.parse(mode, "cloudwatch_logs")))

  /**
   * A Kinesis Data Streams for DynamoDB change record as `eventName, eventID, tableName, approximateCreationDateTime
   * (timestamp), keys, newImage, oldImage, error`, the keys and images typed by `itemSchema` from DynamoDB JSON
   * (numbers into the schema's integral, floating or decimal type, exactly: a value that does not fit is malformed).
   */
  def dynamodb_change(data: Column, itemSchema: StructType): Column =
    dynamodb_change(data, itemSchema, PayloadMode.Permissive.name)

  /**
   * `dynamodb_change` in `mode` (PERMISSIVE or FAILFAST).
   */
  def dynamodb_change(data: Column, itemSchema: StructType, mode: String): Column =
    column(DynamoDbChange(expression(data), itemSchema, PayloadMode.parse(mode, "dynamodb_change")))

  /** `dynamodb_change` with the item schema as a DDL string (`"pk STRING, price DECIMAL(10,2)"`) or as JSON. */
  def dynamodb_change(data: Column, itemSchema: String, mode: String): Column =
    dynamodb_change(data, parseSchema(itemSchema), mode)

  /** The payload decompressed with `codec`: gzip, zlib or zstd; null for a payload that is not valid in that format. */
  def decompress(data: Column, codec: String): Column = decompress(data, codec, PayloadMode.Permissive.name)

  /** [[decompress(data:org\.apache\.spark\.sql\.Column,codec:String)* decompress]] in `mode`. */
  def decompress(data: Column, codec: String, mode: String): Column =
    column(Decompress(expression(data), Codec.parse(codec), PayloadMode.parse(mode, "decompress")))

  private def parseSchema(schema: String): StructType = {
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

  // ---- AWS Glue Schema Registry -----------------------------------------------------------------------------------

  /**
   * Decodes records framed by the AWS Glue Schema Registry's serializers (Avro, JSON Schema or Protobuf) into a struct
   * of the reader schema: option `avroSchema`, `jsonSchema` or `protobufSchema` (.proto text; at most one of them),
   * else the latest version of `schema` in `registry` when this is called; for Protobuf, the message option
   * `protobufMessage` names (full name, or relative to the package), else the definition's first top-level message.
   * Each record's writer version is fetched once per executor and resolved against the reader by the format's rules
   * (Avro's schema resolution; JSON: the reader's properties are read, others skipped, missing ones null; Protobuf's
   * field numbers). `data` is the binary column, or `struct(data, shardId, sequenceNumber)` to have FAILFAST name the
   * record's position. Options: `mode` PERMISSIVE (default: a record not decoded gives null, with the reason in field
   * `errorColumn` when named) or FAILFAST (the task fails naming the version and why), and the connector's
   * `kinesis.region`, credentials and `kinesis.glue.endpointUrl` options.
   */
  def from_glue_schema_registry(
      data: Column,
      registry: String,
      schema: String,
      options: Map[String, String]): Column = {
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
    val (format, reader) = onlyReader(function, parsed).getOrElse {
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
    column(FromGlueSchemaRegistry(expression(data), spec))
  }

  /** [[from_glue_schema_registry]] with options as a Java map (Python, Java). */
  def from_glue_schema_registry(
      data: Column,
      registry: String,
      schema: String,
      options: java.util.Map[String, String]): Column =
    from_glue_schema_registry(data, registry, schema, options.asScala.toMap)

  /**
   * Encodes a struct as Avro framed for the AWS Glue Schema Registry, with the id of the version of `schema` in
   * `registry` whose definition is the writer schema: option `avroSchema`, else one derived from the struct's type
   * (with option `jsonSchema`, a JSON Schema, the struct is written as a JSON object instead). A definition the
   * registry lacks is registered only with option `auto_register` true; else the task fails saying so. Option
   * `compression`: NONE (default) or ZLIB.
   */
  def to_glue_schema_registry(
      struct: Column,
      registry: String,
      schema: String,
      options: Map[String, String]): Column = {
    val function = "to_glue_schema_registry"
    val parsed = new GsrOptions(
      function,
      options,
      Seq(
        GsrOptions.AvroSchema,
        GsrOptions.JsonSchema,
        GsrOptions.ProtobufSchema,
        GsrOptions.Compression,
        GsrOptions.AutoRegister))
    if (parsed.get(GsrOptions.ProtobufSchema).isDefined)
      throw new IllegalArgumentException(s"$function writes Avro (option ${GsrOptions.AvroSchema}, or derived from " +
        s"the struct) and JSON (option ${GsrOptions.JsonSchema}), not Protobuf: option " +
        s"${GsrOptions.ProtobufSchema} is for from_glue_schema_registry. Frame Protobuf records with AWS's serializer.")
    val jsonSchema = parsed.get(GsrOptions.JsonSchema)
    if (jsonSchema.isDefined && parsed.get(GsrOptions.AvroSchema).isDefined)
      throw new IllegalArgumentException(s"$function: options ${GsrOptions.AvroSchema} and ${GsrOptions.JsonSchema} " +
        "are both set; give the writer schema in the one of the data format to write.")
    val spec = GsrWriteSpec(
      parsed.target,
      registry,
      schema,
      parsed.get(GsrOptions.AvroSchema).map { definition =>
        parseAvro(GsrOptions.AvroSchema, definition) // checked now, on the driver
        definition
      },
      parsed.choice(GsrOptions.AutoRegister, Seq("TRUE", "FALSE"), "FALSE") == "TRUE",
      parsed.choice(GsrOptions.Compression, Seq("NONE", "ZLIB"), "NONE") == "ZLIB")
    jsonSchema match {
      case Some(definition) =>
        if (!Try(GlueHttp.Json.readTree(definition)).toOption.exists(node => node != null && node.isObject))
          throw new IllegalArgumentException(
            s"$function: option ${GsrOptions.JsonSchema} is not a JSON object, as a JSON Schema is: $definition")
        // Spark's own writer: fields by name, nulls as null (a schema's required nullable properties are there),
        // timestamps as RFC 3339 in UTC with microseconds (the same whatever the session's time zone), dates
        // yyyy-MM-dd, binary as base64.
        val json = org.apache.spark.sql.functions.to_json(
          struct,
          Map(
            "ignoreNullFields" -> "false",
            "timeZone" -> "UTC",
            "timestampFormat" -> "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"))
        column(ToGlueSchemaRegistryJson(expression(json), spec, definition))
      case None => column(ToGlueSchemaRegistry(expression(struct), spec))
    }
  }

  /** [[to_glue_schema_registry]] with options as a Java map (Python, Java). */
  def to_glue_schema_registry(
      struct: Column,
      registry: String,
      schema: String,
      options: java.util.Map[String, String]): Column =
    to_glue_schema_registry(struct, registry, schema, options.asScala.toMap)

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

  /** The reader schema's data format and definition when an option gives it; fails when more than one does. */
  private def onlyReader(function: String, parsed: GsrOptions): Option[(String, String)] = {
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
        s"$all set; give the reader schema in the one of its data format.")
    }
    given.headOption.map(_._2)
  }

  private def parseAvro(what: String, definition: String): Schema =
    try new Schema.Parser().parse(definition)
    catch {
      case e: org.apache.avro.SchemaParseException =>
        throw new IllegalArgumentException(s"$what is not a valid Avro schema (${e.getMessage}): $definition", e)
    }

  // ---- shared ----

  private def column(expression: org.apache.spark.sql.catalyst.expressions.Expression): Column =
    ExpressionColumns.column(expression)

  private def expression(column: Column): org.apache.spark.sql.catalyst.expressions.Expression =
    ExpressionColumns.expression(column)
}
