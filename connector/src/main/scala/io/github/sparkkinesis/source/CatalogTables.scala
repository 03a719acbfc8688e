package io.github.sparkkinesis.source

import java.util.Locale

import org.apache.spark.sql.connector.catalog.TableCatalog
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.StructType

import io.github.sparkkinesis.options.PlanRedaction

/**
 * What sets a table defined in a catalog (`CREATE TABLE t USING aws-kinesis OPTIONS (...)`) apart from the table of a
 * `format("aws-kinesis")` read or write: the catalog hands the provider its stored properties, the table's provider
 * among them; Spark shows those properties to anyone who describes the table; and SQL statements reach it that change
 * or remove rows, which a Kinesis stream, append-only, cannot do.
 */
object CatalogTables {

  /** Whether `options` are a catalog's properties of a table: only a catalog sets the table's provider among them. */
  def isCatalogTable(options: Map[String, String]): Boolean = options.contains(TableCatalog.PROP_PROVIDER)

  /**
   * The properties Spark shows (DESCRIBE TABLE EXTENDED, SHOW CREATE TABLE, SHOW TBLPROPERTIES): each secret option's
   * value hidden, given plain or under the catalog's `option.` prefix, whatever the session's redaction patterns.
   */
  def shownProperties(options: Map[String, String]): Map[String, String] = options.map { case (key, value) =>
    val option = key.toLowerCase(Locale.ROOT).stripPrefix(TableCatalog.OPTION_PREFIX)
    key -> (if (PlanRedaction.secretKeys.contains(option)) PlanRedaction.Hidden else value)
  }

  /**
   * Fails, saying what to write instead, when a catalog defines a table with columns other than the source's (a column
   * list, or CREATE TABLE ... AS SELECT) or with partitioning, bucketing or clustering.
   */
  def checkDefinition(schema: StructType, partitioning: Array[Transform]): Unit = {
    def columns(s: StructType) = s.fields.map(f => (f.name, f.dataType)).toSeq
    if (schema != null && schema.nonEmpty && columns(schema) != columns(KinesisSchema.schema)) {
      throw new UnsupportedOperationException(
        s"An aws-kinesis table has the source's fixed columns (${KinesisSchema.schema.simpleString}), not " +
          s"${schema.simpleString}. Create it with no column list and no AS SELECT (CREATE TABLE t USING " +
          "aws-kinesis OPTIONS (...)), then add rows with INSERT INTO t SELECT data, partitionKey FROM ...")
    }
    if (partitioning != null && partitioning.nonEmpty) {
      throw new UnsupportedOperationException(
        s"An aws-kinesis table cannot be partitioned, bucketed or clustered (${partitioning.map(_.describe)
            .mkString(", ")}): Kinesis spreads rows over the stream's shards by their partitionKey (or " +
          "explicitHashKey) column. Remove PARTITIONED BY, CLUSTERED BY and CLUSTER BY from CREATE TABLE.")
    }
  }

  /** Why Spark's V1 read path (a relation) is refused, and what to use instead. */
  val V1Refused: String =
    "Spark asked aws-kinesis for a V1 relation, which it does not offer: Spark 3.5's session catalog does so for a " +
      "table USING aws-kinesis (Spark 4's reads and writes such a table), and so does any Spark with " +
      "spark.sql.sources.useV1SourceList naming aws-kinesis. Use spark.read / " +
      "spark.readStream.format(\"aws-kinesis\") and df.write / df.writeStream.format(\"aws-kinesis\") with the " +
      "table's options, or Spark 4."

  /** The refusal of `statement` (DELETE, UPDATE, MERGE, TRUNCATE TABLE), which would change or remove records. */
  def refused(statement: String): UnsupportedOperationException = new UnsupportedOperationException(
    s"$statement is not possible on an aws-kinesis table: a Kinesis stream is append-only, its records are never " +
      "changed or removed (they expire after the stream's retention period). Add rows with INSERT INTO; DROP TABLE " +
      "removes only the table's definition, never the stream.")
}
