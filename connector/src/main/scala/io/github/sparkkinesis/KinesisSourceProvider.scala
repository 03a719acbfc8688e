package io.github.sparkkinesis

import java.util

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.{KinesisSchema, KinesisTable}

/**
 * Entry point of the `aws-kinesis` data source. Options are parsed and checked here, when `load()` is
 * called, so a bad option fails before any query starts.
 */
final class KinesisSourceProvider extends TableProvider with DataSourceRegister {

  override def shortName(): String = KinesisSourceProvider.ShortName

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    KinesisSourceOptions.parse(options.asScala.toMap)
    KinesisSchema.schema
  }

  override def getTable(
      schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table = {
    if (schema != null && schema != KinesisSchema.schema) {
      throw new IllegalArgumentException(
        s"The aws-kinesis source has a fixed schema; remove .schema(...) from the reader. Its schema is " +
          KinesisSchema.schema.simpleString)
    }
    new KinesisTable(KinesisSourceOptions.parse(properties.asScala.toMap))
  }

  override def supportsExternalMetadata(): Boolean = true
}

object KinesisSourceProvider {
  val ShortName = "aws-kinesis"
}
