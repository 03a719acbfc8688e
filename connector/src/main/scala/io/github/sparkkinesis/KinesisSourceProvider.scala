package io.github.sparkkinesis

import java.util

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.spark.sql.{DataFrame, SQLContext, SaveMode}
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister, RelationProvider}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.github.sparkkinesis.options.{KinesisSourceOptions, PlanRedaction}
import io.github.sparkkinesis.source.{CatalogTables, KinesisSchema, KinesisTable}

/**
 * Entry point of the `aws-kinesis` data source (and of `kinesis`, see [[KinesisShortNameProvider]]), for reads and
 * writes, and for tables a catalog defines with `USING aws-kinesis`. A reader's options are parsed and checked in
 * `inferSchema`, when `load()` is called (or the table is created), so a bad option fails before any query starts; a
 * writer's when Spark analyses the write.
 */
class KinesisSourceProvider
    extends TableProvider with DataSourceRegister with CreatableRelationProvider with RelationProvider {

  override def shortName(): String = KinesisSourceProvider.ShortName

  /** Called for reads only: writers hand their DataFrame's schema to `getTable` (external metadata). */
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    PlanRedaction.ensureHidden(options.asCaseSensitiveMap().keySet().asScala)
    KinesisSourceOptions.parse(options.asScala.toMap)
    KinesisSchema.schema
  }

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = {
    // Reads with a schema and every write come here first, before Spark plans anything with these options.
    PlanRedaction.ensureHidden(properties.keySet().asScala)
    val options = properties.asScala.toMap
    if (CatalogTables.isCatalogTable(options)) {
      // A catalog's table: its stored schema, or the columns a CREATE TABLE gives, which must be the source's.
      CatalogTables.checkDefinition(schema, partitioning)
      new KinesisTable(options, None)
    } else new KinesisTable(options, Option(schema))
  }

  override def supportsExternalMetadata(): Boolean = true

  /**
   * Spark's V1 read path, which Spark 3.5's session catalog takes for every table `USING aws-kinesis` (Spark 4's hands
   * such a table to [[getTable]]): refused, saying what to use instead.
   */
  override def createRelation(context: SQLContext, parameters: Map[String, String]): BaseRelation =
    throw new UnsupportedOperationException(CatalogTables.V1Refused)

  /**
   * Every `df.write.save()` arrives here (see [[KinesisTable]] for why). A stream always "exists" and is append-only,
   * so append and the default mode (error if exists) append, through the table's DataSource V2 batch write; overwrite
   * and ignore make no sense for a stream and fail.
   */
  override def createRelation(
      context: SQLContext,
      mode: SaveMode,
      parameters: Map[String, String],
      data: DataFrame): BaseRelation = {
    PlanRedaction.ensureHidden(parameters.keys)
    mode match {
      case _ if parameters.get(KinesisTable.BatchWriteMarker).contains("true") =>
        // Spark chose this V1 entry point even for the table that offers V2 batch writes: it would loop forever.
        throw new IllegalStateException("Spark sent an aws-kinesis write to the V1 write path: remove aws-kinesis " +
          "from spark.sql.sources.useV1SourceList.")
      case SaveMode.Append | SaveMode.ErrorIfExists =>
        data.write.format(KinesisSourceProvider.ShortName).mode(SaveMode.Append).options(parameters)
          .option(KinesisTable.BatchWriteMarker, "true").save()
        new BaseRelation {
          override def sqlContext: SQLContext = context
          override def schema: StructType = data.schema
        }
      case other =>
        throw new IllegalArgumentException(
          s"Save mode $other is not supported by the aws-kinesis sink: a Kinesis stream is append-only. " +
            "Use .mode(\"append\") (or the default mode).")
    }
  }
}

object KinesisSourceProvider {
  val ShortName = "aws-kinesis"
}

/**
 * The same data source under the format name the qubole/roncemer and Databricks connectors use, `kinesis`, so that
 * their users' code runs with only the JAR swapped. When another JAR that registers `kinesis` is on the class path,
 * Spark refuses the name as ambiguous (multiple sources found for kinesis); `aws-kinesis` or this class' name then
 * picks this connector.
 */
final class KinesisShortNameProvider extends KinesisSourceProvider {
  override def shortName(): String = KinesisShortNameProvider.ShortName
}

object KinesisShortNameProvider {
  val ShortName = "kinesis"
}
