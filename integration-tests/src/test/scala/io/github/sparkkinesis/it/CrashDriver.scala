package io.github.sparkkinesis.it

import scala.concurrent.duration._

import org.apache.spark.sql.streaming.Trigger

/**
 * The query [[CrashSuite]] kills: reads a stream from TRIM_HORIZON into a parquet sink with a checkpoint until the JVM
 * dies. Arguments: stream name, checkpoint directory, output directory, then options as `name=value`. The emulator
 * comes from `KINESIS_MOCK_ENDPOINT`, which the parent sets to its own.
 */
object CrashDriver {
  def main(args: Array[String]): Unit = {
    val (stream, checkpoint, output, extra) = arguments("CrashDriver", args)
    val query = SparkHarness.readKinesis(stream, "TRIM_HORIZON", extra: _*).writeStream
      .format("parquet")
      .option("path", output)
      .option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(200.millis))
      .start()
    // Tells the parent the query is up; the parent kills this JVM, it never stops on its own.
    println(s"CrashDriver: query ${query.id} started")
    query.awaitTermination()
  }

  /** A child query's arguments: stream name, checkpoint directory, output directory, then options as `name=value`. */
  def arguments(driver: String, args: Array[String]): (String, String, String, Seq[(String, String)]) = {
    require(args.length >= 3, s"usage: $driver <stream> <checkpoint dir> <output dir> [option=value ...]")
    require(sys.env.contains("KINESIS_MOCK_ENDPOINT"), "KINESIS_MOCK_ENDPOINT must name the parent's emulator")
    val options = args.drop(3).toSeq.map { kv =>
      val Array(k, v) = kv.split("=", 2)
      k -> v
    }
    (args(0), args(1), args(2), options)
  }
}
