package io.github.sparkkinesis.payloads

import org.apache.avro.Schema
import org.apache.spark.sql.Column
import org.apache.spark.sql.sparkkinesis.ColumnExpressions

import io.github.sparkkinesis.compat.JavaCollections._

/** Functions that decode (and encode) the formats Kinesis records commonly carry, for `select` and `withColumn`. */
object functions {

  // ---- AWS Glue Schema Registry -----------------------------------------------------------------------------------

  /**
   * Decodes records framed by the AWS Glue Schema Registry's serializers (Avro) into a struct of the reader schema:
   * option `avroSchema`, else the latest version of `schema` in `registry` when this is called. Each record's writer
   * version is fetched once per executor and resolved against the reader by Avro's rules. `data` is the binary column,
   * or `struct(data, shardId, sequenceNumber)` to have FAILFAST name the record's position. Options: `mode` PERMISSIVE
   * (default: a record not decoded gives null, with the reason in field `errorColumn` when named) or FAILFAST (the task
   * fails naming the version and why), and the connector's `kinesis.region`, credentials and `kinesis.glue.endpointUrl`
   * options.
   */
  def from_glue_schema_registry(
      data: Column,
      registry: String,
      schema: String,
      options: Map[String, String]): Column = {
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
    ColumnExpressions.column(FromGlueSchemaRegistry(ColumnExpressions.expression(data), spec))
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
   * `registry` whose definition is the writer schema: option `avroSchema`, else one derived from the struct's type. A
   * definition the registry lacks is registered only with option `auto_register` true; else the task fails saying so.
   * Option `compression`: NONE (default) or ZLIB.
   */
  def to_glue_schema_registry(
      struct: Column,
      registry: String,
      schema: String,
      options: Map[String, String]): Column = {
    val parsed = new GsrOptions(
      "to_glue_schema_registry",
      options,
      Seq(GsrOptions.AvroSchema, GsrOptions.Compression, GsrOptions.AutoRegister))
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
    ColumnExpressions.column(ToGlueSchemaRegistry(ColumnExpressions.expression(struct), spec))
  }

  /** [[to_glue_schema_registry]] with options as a Java map (Python, Java). */
  def to_glue_schema_registry(
      struct: Column,
      registry: String,
      schema: String,
      options: java.util.Map[String, String]): Column =
    to_glue_schema_registry(struct, registry, schema, options.asScala.toMap)

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

  // ---- end of AWS Glue Schema Registry ------------------------------------------------------------------------------
}
