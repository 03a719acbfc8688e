package io.github.sparkkinesis

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.FunctionIdentifier

import io.github.sparkkinesis.payloads.PayloadSqlFunctions

/**
 * Registers the connector's payload functions (`cloudwatch_logs`, `dynamodb_change`, `decompress`,
 * `from_glue_schema_registry`, `to_glue_schema_registry`) as SQL functions of every session, for SQL and Spark Connect
 * clients: `--conf spark.sql.extensions=io.github.sparkkinesis.KinesisSqlExtensions`.
 */
class KinesisSqlExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit =
    PayloadSqlFunctions.all.foreach { function =>
      extensions.injectFunction((FunctionIdentifier(function.name), function.info, function.build))
    }
}
