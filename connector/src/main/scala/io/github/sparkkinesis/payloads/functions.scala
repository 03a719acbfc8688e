package io.github.sparkkinesis.payloads

import org.apache.spark.sparkkinesis.ExpressionColumns
import org.apache.spark.sql.Column
import org.apache.spark.sql.types.StructType

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
    column(PayloadExpressions.cloudwatchLogs(expression(data), mode))

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
    column(PayloadExpressions.dynamodbChange(expression(data), itemSchema, mode))

  /** `dynamodb_change` with the item schema as a DDL string (`"pk STRING, price DECIMAL(10,2)"`) or as JSON. */
  def dynamodb_change(data: Column, itemSchema: String, mode: String): Column =
    dynamodb_change(data, PayloadExpressions.itemSchema(itemSchema), mode)

  /** The payload decompressed with `codec`: gzip, zlib or zstd; null for a payload that is not valid in that format. */
  def decompress(data: Column, codec: String): Column = decompress(data, codec, PayloadMode.Permissive.name)

  /** [[decompress(data:org\.apache\.spark\.sql\.Column,codec:String)* decompress]] in `mode`. */
  def decompress(data: Column, codec: String, mode: String): Column =
    column(PayloadExpressions.decompress(expression(data), codec, mode))

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
      options: Map[String, String]): Column =
    column(PayloadExpressions.fromGlueSchemaRegistry(expression(data), registry, schema, options))

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
   * (with option `jsonSchema`, a JSON Schema, the struct is written as a JSON object instead; with option
   * `protobufSchema`, .proto text, as the Protobuf message option `protobufMessage` names, else the first top-level
   * one, fields matched by name and a struct that does not fit refused when the query is analysed). A definition the
   * registry lacks is registered only with option `auto_register` true; else the task fails saying so. Option
   * `compression`: NONE (default) or ZLIB.
   */
  def to_glue_schema_registry(
      struct: Column,
      registry: String,
      schema: String,
      options: Map[String, String]): Column =
    column(PayloadExpressions.toGlueSchemaRegistry(expression(struct), registry, schema, options))

  /** [[to_glue_schema_registry]] with options as a Java map (Python, Java). */
  def to_glue_schema_registry(
      struct: Column,
      registry: String,
      schema: String,
      options: java.util.Map[String, String]): Column =
    to_glue_schema_registry(struct, registry, schema, options.asScala.toMap)

  // ---- shared ----

  private def column(expression: org.apache.spark.sql.catalyst.expressions.Expression): Column =
    ExpressionColumns.column(expression)

  private def expression(column: Column): org.apache.spark.sql.catalyst.expressions.Expression =
    ExpressionColumns.expression(column)
}
