import org.apache.spark.sql.SparkSession

/** Reads a whole stream once (a batch read) through the `aws-kinesis` format and prints its payloads, sorted. */
object ReadStream {
  def main(args: Array[String]): Unit = {
    val Array(endpoint, stream, region, keyId, secret) = args
    val spark = SparkSession.builder().master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    val rows = spark.read
      .format("aws-kinesis")
      .option("kinesis.streamName", stream)
      .option("kinesis.region", region)
      .option("kinesis.endpointUrl", endpoint)
      .option("kinesis.awsAccessKeyId", keyId)
      .option("kinesis.awsSecretKey", secret)
      .load()
      .selectExpr("CAST(data AS STRING)")
      .collect()
      .map(_.getString(0))
      .sorted
    println(s"ROWS ${rows.mkString(",")}")
    spark.stop()
  }
}
