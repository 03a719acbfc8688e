package io.github.sparkkinesis.it

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * Catalog tables `USING aws-kinesis` on Spark 3.5, whose session catalog reads and writes data source tables only
 * through Spark's V1 interfaces: the table is stored, and each use of it is refused saying what to use instead (Spark 4
 * runs the statements themselves: the suite of the same name under scala-2.13).
 */
class SqlTablesSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private def message(statement: => Any): String =
    Iterator.iterate[Throwable](intercept[Exception](statement))(_.getCause).takeWhile(_ != null)
      .map(_.getMessage).mkString(" / ")

  test("Given a table USING aws-kinesis on Spark 3.5, when it is read or written with SQL, then the statement is " +
    "refused naming format(\"aws-kinesis\") and Spark 4, and nothing is written") {
    val stream = TestStreams.createStream("it-sql-35", shards = 1)
    val options = SinkHarness.sinkOptions(Some(stream)).map { case (k, v) => s"'$k' '$v'" }.mkString(", ")
    spark.sql(s"CREATE TABLE orders35 USING `aws-kinesis` OPTIONS ($options)")
    try {
      for (statement <- Seq("SELECT * FROM orders35", "INSERT INTO orders35 SELECT 'v' AS data, 'k' AS partitionKey"))
        withClue(s"$statement: ") {
          message(spark.sql(statement).collect()) should (include("format(\"aws-kinesis\")") and include("Spark 4"))
        }
      message(spark.readStream.table("orders35")) should include("does not support streamed reading")
      SinkHarness.readBack(stream)._1 shouldBe empty
    } finally spark.sql("DROP TABLE orders35")
  }
}
