package org.apache.spark.sparkkinesis

import org.apache.spark.sql.{DataFrame, Encoders, SparkSession}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.functions.{col, count, expr}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The shuffles a real-time batch's stages take beside the source's tasks, counted from the query's plan. */
class RealTimeBatchSlotsSuite extends AnyFunSuite with Matchers with BeforeAndAfterAll {

  private lazy val spark = SparkSession.builder().master("local[1]").appName("real-time-batch-slots")
    .config("spark.ui.enabled", "false").getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def records: DataFrame =
    MemoryStream[(String, String, Long)]()(
      Encoders.tuple(Encoders.STRING, Encoders.STRING, Encoders.scalaLong),
      spark.sqlContext).toDF().toDF("shardId", "sequenceNumber", "subSequenceNumber")

  private def shuffles(query: DataFrame, partitions: Int = 200): Seq[Int] =
    RealTimeBatchSlots.shuffles(query.queryExecution.analyzed, partitions)

  test("given a stateless query, when its shuffles are counted, then it has none") {
    shuffles(records.filter(col("shardId") =!= "x").select(expr("upper(shardId)"))) shouldBe empty
  }

  test("given dropDuplicates on the position then a count per shard, when counted, then two shuffles of the " +
    "state's partitions") {
    val query = records.dropDuplicates("shardId", "sequenceNumber", "subSequenceNumber").groupBy("shardId").count()
    shuffles(query, partitions = 2) shouldBe Seq(2, 2)
  }

  test("given a count without keys and a repartition, when counted, then one partition and the repartition's own") {
    shuffles(records.repartition(3).agg(count("*"))) shouldBe Seq(1, 3)
  }

  test("given a join of two streams, when counted, then a shuffle per side") {
    shuffles(records.join(records.withColumnRenamed("sequenceNumber", "other"), "shardId"), 4) shouldBe Seq(4, 4)
  }
}
