package io.github.sparkkinesis.it

import scala.io.StdIn

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.col

/**
 * The child JVM of [[PrometheusMetricsSuite]]: a Spark driver whose UI (on the given port) serves Spark's metrics in
 * Prometheus' format at `/metrics/prometheus`, configured as the docs say, running query `metrics-it` from one stream
 * into another through the sink. It stops the query when its standard input says `stop`, and ends when it closes.
 * Arguments: source stream, sink stream, checkpoint directory, UI port.
 */
object MetricsDriver {
  def main(args: Array[String]): Unit = {
    val Array(source, sink, checkpoint, port) = args
    val spark = SparkSession.builder()
      .master("local[2]")
      .appName("spark-kinesis-metrics")
      .config("spark.ui.enabled", "true")
      .config("spark.ui.port", port)
      .config("spark.ui.prometheus.enabled", "true")
      .config("spark.metrics.conf.*.sink.prometheusServlet.class", "org.apache.spark.metrics.sink.PrometheusServlet")
      .config("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
      .config("spark.metrics.namespace", "it")
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .getOrCreate()
    val query = spark.readStream.format("aws-kinesis")
      .options(SparkHarness.kinesisOptions(source, "TRIM_HORIZON")).load()
      .select(col("data"), col("partitionKey"))
      .writeStream.format("aws-kinesis").options(SinkHarness.sinkOptions(Some(sink)))
      .queryName("metrics-it")
      .option("checkpointLocation", checkpoint)
      .start()
    println(s"MetricsDriver: started on ${spark.sparkContext.uiWebUrl.getOrElse("no UI")}")
    Iterator.continually(StdIn.readLine()).takeWhile(_ != null).foreach {
      case "stop" =>
        query.stop()
        println("MetricsDriver: stopped")
      case _ =>
    }
    spark.stop()
  }
}
