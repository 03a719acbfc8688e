package io.github.sparkkinesis.payloads

import org.apache.spark.sql.catalyst.expressions.{ExprUtils, Expression, ExpressionInfo}
import org.apache.spark.sql.types.StringType

/**
 * The payload functions as SQL functions (what [[io.github.sparkkinesis.KinesisSqlExtensions]] registers): the same
 * expressions as the Column API's, with the schema as a DDL string and the options as `map(...)`, both constants.
 */
private[sparkkinesis] object PayloadSqlFunctions {

  /** A SQL function: its name, its arguments as `DESCRIBE FUNCTION` shows them, and what it does. */
  final case class SqlFunction(
      name: String,
      signature: String,
      summary: String,
      expressionClass: Class[_],
      build: Seq[Expression] => Expression) {

    def info: ExpressionInfo =
      new ExpressionInfo(
        expressionClass.getName,
        null,
        name,
        s"_FUNC_($signature) - $summary",
        "",
        "",
        "",
        "",
        "",
        "",
        "")
  }

  private val Permissive = PayloadMode.Permissive.name

  val all: Seq[SqlFunction] = Seq(
    SqlFunction(
      "cloudwatch_logs",
      "data[, mode]",
      "A CloudWatch Logs subscription record as a struct with logEvents: array<struct<id, timestamp, message>>.",
      classOf[CloudWatchLogs],
      given => {
        val args = new Arguments("cloudwatch_logs", "data[, mode]", given, required = 1)
        PayloadExpressions.cloudwatchLogs(args(0), args.string(1, "mode", Some(Permissive)))
      }),
    SqlFunction(
      "dynamodb_change",
      "data, itemSchema[, mode]",
      "A Kinesis Data Streams for DynamoDB change record, its keys and images typed by the DDL string itemSchema.",
      classOf[DynamoDbChange],
      given => {
        val args = new Arguments("dynamodb_change", "data, itemSchema[, mode]", given, required = 2)
        val schema = PayloadExpressions.itemSchema(args.string(1, "itemSchema", None))
        PayloadExpressions.dynamodbChange(args(0), schema, args.string(2, "mode", Some(Permissive)))
      }),
    SqlFunction(
      "decompress",
      "data, codec[, mode]",
      "The payload decompressed with codec: 'gzip', 'zlib' or 'zstd'.",
      classOf[Decompress],
      given => {
        val args = new Arguments("decompress", "data, codec[, mode]", given, required = 2)
        PayloadExpressions.decompress(args(0), args.string(1, "codec", None), args.string(2, "mode", Some(Permissive)))
      }),
    glueFunction(
      "from_glue_schema_registry",
      "data",
      "Records framed by the AWS Glue Schema Registry's serializers (Avro) decoded into a struct; options a map(...).",
      classOf[FromGlueSchemaRegistry],
      PayloadExpressions.fromGlueSchemaRegistry),
    glueFunction(
      "to_glue_schema_registry",
      "struct",
      "A struct encoded as Avro, JSON or Protobuf and framed for the AWS Glue Schema Registry; options a " +
        "map(...).",
      classOf[ToGlueSchemaRegistry],
      PayloadExpressions.toGlueSchemaRegistry))

  /** A Glue Schema Registry function: its column (named `column`), registry, schema, then options. */
  private def glueFunction(
      name: String,
      column: String,
      summary: String,
      expressionClass: Class[_],
      build: (Expression, String, String, Map[String, String]) => Expression): SqlFunction = {
    val signature = s"$column, registry, schema[, options]"
    SqlFunction(
      name,
      signature,
      summary,
      expressionClass,
      given => {
        val args = new Arguments(name, signature, given, required = 3)
        build(args(0), args.string(1, "registry", None), args.string(2, "schema", None), args.options(3))
      })
  }

  /** The arguments a SQL call gave `function`: between `required` and the signature's count, the rest constants. */
  private final class Arguments(function: String, signature: String, given: Seq[Expression], required: Int) {
    private val most = signature.split(",").length
    if (given.size < required || given.size > most)
      throw new IllegalArgumentException(s"$function takes $required to $most arguments ($signature), not " +
        s"${given.size}: ${given.map(_.sql).mkString(", ")}")

    def apply(index: Int): Expression = given(index)

    /** A constant string argument; `default` when not given (None: it is required). */
    def string(index: Int, name: String, default: Option[String]): String =
      given.lift(index).map { e =>
        val value = if (e.foldable && e.dataType.isInstanceOf[StringType]) Option(e.eval()) else None
        value.map(_.toString).getOrElse(throw new IllegalArgumentException(
          s"$function: argument $name must be a constant string (such as '...'), not ${e.sql}"))
      }.orElse(default).get

    /** The options argument, `map('key', 'value', ...)` of constant strings; no options when not given. */
    def options(index: Int): Map[String, String] =
      given.lift(index).fold(Map.empty[String, String])(e => ExprUtils.convertToMapData(e))
  }
}
