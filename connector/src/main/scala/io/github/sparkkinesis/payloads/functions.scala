package io.github.sparkkinesis.payloads

import org.apache.spark.sparkkinesis.ExpressionColumns
import org.apache.spark.sql.Column
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * Decoders of what Kinesis records commonly carry, as column functions over the source's binary `data` column. Each
 * takes a `mode`: PERMISSIVE (the default) gives null for a record it cannot decode (with the reason in the result's
 * `error` field, where it has one), FAILFAST fails the task with the reason.
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

  // ---- shared ----

  private def column(expression: org.apache.spark.sql.catalyst.expressions.Expression): Column =
    ExpressionColumns.column(expression)

  private def expression(column: Column): org.apache.spark.sql.catalyst.expressions.Expression =
    ExpressionColumns.expression(column)
}
