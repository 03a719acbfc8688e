package io.github.sparkkinesis.source

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.spark.sql.connector.catalog.TableCapability
import org.apache.spark.sql.connector.expressions.{Expressions, Transform}
import org.apache.spark.sql.connector.write.RowLevelOperation.Command
import org.apache.spark.sql.connector.write.RowLevelOperationInfo
import org.apache.spark.sql.types.{BinaryType, StringType, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.KinesisSourceProvider
import io.github.sparkkinesis.options.PlanRedaction

class CatalogTablesSuite extends AnyFunSuite with Matchers {

  /** What the session catalog hands the provider for `CREATE TABLE t USING aws-kinesis OPTIONS (...)`. */
  private val catalogProperties = Map(
    "provider" -> "aws-kinesis",
    "owner" -> "someone",
    "kinesis.streamName" -> "orders",
    "option.kinesis.streamName" -> "orders",
    "kinesis.awsAccessKeyId" -> "AKIA-ID",
    "option.kinesis.awsAccessKeyId" -> "AKIA-ID",
    "Kinesis.AwsSecretKey" -> "the-secret",
    "option.kinesis.stsExternalId" -> "the-external-id",
    "awsSecretKey" -> "alias-secret")

  private def table(options: Map[String, String]) =
    new KinesisSourceProvider().getTable(KinesisSchema.schema, Array.empty[Transform], options.asJava)

  test("Given a catalog's properties, when the table shows them, then every secret value is hidden, plain, under " +
    "the option. prefix, in any case and by alias, and the rest is kept") {
    val shown = table(catalogProperties).properties().asScala.toMap
    shown.keySet shouldBe catalogProperties.keySet
    Seq(
      "kinesis.awsAccessKeyId",
      "option.kinesis.awsAccessKeyId",
      "Kinesis.AwsSecretKey",
      "option.kinesis.stsExternalId",
      "awsSecretKey").foreach(key => shown(key) shouldBe PlanRedaction.Hidden)
    Seq("provider", "owner", "kinesis.streamName", "option.kinesis.streamName")
      .foreach(key => shown(key) shouldBe catalogProperties(key))
  }

  test("Given a catalog's table, then it offers batch writes and truncation (so INSERT OVERWRITE reaches the " +
    "refusal); given a reader's or writer's options, then neither") {
    val capabilities = (options: Map[String, String]) => table(options).capabilities().asScala
    capabilities(catalogProperties) should contain allOf (TableCapability.BATCH_WRITE, TableCapability.TRUNCATE)
    capabilities(Map("kinesis.streamName" -> "orders")) should contain noneOf (
      TableCapability.BATCH_WRITE,
      TableCapability.TRUNCATE)
  }

  test("Given a catalog's table, when TRUNCATE, DELETE, UPDATE or MERGE reaches it, then it refuses saying a stream " +
    "is append-only and what to use") {
    val kinesisTable = new KinesisTable(catalogProperties, None)
    val truncate = intercept[UnsupportedOperationException](kinesisTable.truncateTable()).getMessage
    truncate should (startWith("TRUNCATE TABLE") and include("append-only") and include("INSERT INTO"))
    for (statement <- Seq(Command.DELETE, Command.UPDATE, Command.MERGE)) {
      val info = new RowLevelOperationInfo {
        override def options(): CaseInsensitiveStringMap = CaseInsensitiveStringMap.empty()
        override def command(): Command = statement
      }
      intercept[UnsupportedOperationException](kinesisTable.newRowLevelOperationBuilder(info)).getMessage should
        (startWith(statement.toString) and include("append-only") and include("INSERT INTO"))
    }
  }

  test("Given CREATE TABLE with other columns or with partitioning, then the provider refuses it saying what to " +
    "write instead; the source's columns, nullable or not, are accepted") {
    val provider = new KinesisSourceProvider()
    val two = StructType(Seq(StructField("data", BinaryType), StructField("partitionKey", StringType)))
    intercept[UnsupportedOperationException](
      provider.getTable(two, Array.empty[Transform], catalogProperties.asJava)).getMessage should
      (include("fixed columns") and include("INSERT INTO t SELECT data, partitionKey"))
    intercept[UnsupportedOperationException](provider.getTable(
      KinesisSchema.schema,
      Array[Transform](Expressions.identity("partitionKey")),
      catalogProperties.asJava)).getMessage should (include("partitionKey") and include("Remove PARTITIONED BY"))
    val nullable = StructType(KinesisSchema.schema.fields.map(_.copy(nullable = true)))
    // (without the alias spelling whose value contradicts kinesis.awsSecretKey's, which name() would not resolve)
    provider.getTable(nullable, Array.empty[Transform], (catalogProperties - "awsSecretKey").asJava).name() shouldBe
      "kinesis:orders"
    // A writer's DataFrame has its own columns: not a catalog's table, not checked here
    provider.getTable(two, Array.empty[Transform], Map("kinesis.streamName" -> "orders").asJava)
  }

  test("Given Spark's V1 read path (Spark 3.5's catalog tables), then the provider refuses it naming what to use") {
    intercept[UnsupportedOperationException](new KinesisSourceProvider().createRelation(null, Map.empty))
      .getMessage should (include("format(\"aws-kinesis\")") and include("Spark 4"))
  }
}
