package io.github.sparkkinesis.it

/**
 * The real-time query [[RealTimeSuite]] kills: reads a stream from TRIM_HORIZON in real-time mode (5-second batches)
 * into the real-time test sink until the JVM dies. Arguments: stream name, checkpoint directory, output directory, then
 * options as `name=value`. The emulator comes from `KINESIS_MOCK_ENDPOINT`, which the parent sets to its own.
 */
object RealTimeDriver {
  def main(args: Array[String]): Unit = {
    require(args.length >= 3, "usage: RealTimeDriver <stream> <checkpoint dir> <output dir> [option=value ...]")
    require(sys.env.contains("KINESIS_MOCK_ENDPOINT"), "KINESIS_MOCK_ENDPOINT must name the parent's emulator")
    val Array(stream, checkpoint, output) = args.take(3)
    val options = args.drop(3).toSeq.map { kv =>
      val Array(k, v) = kv.split("=", 2)
      k -> v
    }
    val query = RealTimeSink.writeTo(
      SparkHarness.readKinesis(stream, "TRIM_HORIZON", options: _*),
      output,
      "5 seconds",
      checkpoint).start()
    println(s"RealTimeDriver: query ${query.id} started") // the parent kills this JVM; it never stops on its own
    query.awaitTermination()
  }
}
