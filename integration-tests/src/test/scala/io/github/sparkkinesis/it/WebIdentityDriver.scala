package io.github.sparkkinesis.it

import org.apache.spark.sql.streaming.Trigger

/**
 * Run by [[CredentialsSuite]] in a JVM whose environment holds a web identity (as EKS gives a pod with IRSA) and no
 * other credentials: reads a stream to its end with the default chain and writes its rows to another stream, both
 * through the connector's shaded SDK. Arguments: source stream, target stream, checkpoint directory.
 */
object WebIdentityDriver {
  def main(args: Array[String]): Unit = {
    require(args.length == 3, "usage: WebIdentityDriver <source stream> <target stream> <checkpoint dir>")
    val Array(source, target, checkpoint) = args
    val spark = SparkHarness.session
    // No credentials options: the connector's default chain must find the web identity.
    val query = spark.readStream.format("aws-kinesis").options(Map(
      "kinesis.streamName" -> source,
      "kinesis.endpointUrl" -> KinesisMock.endpoint,
      "kinesis.region" -> TestStreams.Region,
      "kinesis.startingPosition" -> "TRIM_HORIZON")).load()
      .selectExpr("data", "partitionKey")
      .writeStream.format("memory").queryName("web_identity_rows").option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow()).start()
    query.awaitTermination()
    val rows = spark.table("web_identity_rows")
    rows.write.format("aws-kinesis").mode("append").options(Map(
      "kinesis.streamName" -> target,
      "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
      "kinesis.verifyCertificate" -> "false",
      "kinesis.region" -> TestStreams.Region)).save()
    println(s"WebIdentityDriver: copied ${rows.count()} rows from $source to $target")
    spark.stop()
  }
}
