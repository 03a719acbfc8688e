package io.github.sparkkinesis.it

import scala.io.StdIn

import org.apache.spark.sql.functions._

/**
 * The child JVM of [[ProducerLifecycleSuite]]: writes 1,000 rows to a stream through the sink, says so, and ends
 * normally when its standard input closes (unless the parent kills it first). Argument: the stream name.
 */
object SinkWriterDriver {
  def main(args: Array[String]): Unit = {
    val Array(stream) = args
    val spark = SparkHarness.session
    spark.range(0, 1000, 1, 2)
      .select(concat(lit("child-"), col("id")).as("data"), (col("id") % 7).cast("string").as("partitionKey"))
      .write.format("aws-kinesis").options(SinkHarness.sinkOptions(Some(stream))).mode("append").save()
    println("SinkWriterDriver: written")
    while (StdIn.readLine() != null) {}
  }
}
