package io.github.sparkkinesis.it

import java.io.{ByteArrayOutputStream, File}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.Trigger
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, AwsCredentials, AwsCredentialsProvider}

/** What [[SecretsInPlansSuite]] and its child JVM share: secret option values no plan or log may show. */
object Secrets {
  // No value contains a word Spark's default patterns redact by value (secret, token, password, access key).
  val SecretKey = "Zq7sk-4242-hidden"
  val SessionToken = "Zq7st-4242-hidden"
  val SourceExternalId = "Zq7ext-source-4242"
  val SinkExternalId = "Zq7ext-sink-4242"
  val ProviderParam = "Zq7param-4242-hidden"
  val all: Seq[String] = Seq(SecretKey, SessionToken, SourceExternalId, SinkExternalId, ProviderParam)

  private def role(externalIdKey: String, externalId: String) = Map(
    "kinesis.stsRoleArn" -> "arn:aws:iam::123456789012:role/it-secrets",
    "kinesis.stsEndpointUrl" -> Moto.endpoint,
    externalIdKey -> externalId)

  /** The source's: keys with a session token, the secret key and the external id under aliases, a role. */
  def sourceOptions(stream: String): Map[String, String] = Map(
    "kinesis.streamName" -> stream,
    "kinesis.endpointUrl" -> KinesisMock.endpoint,
    "kinesis.region" -> TestStreams.Region,
    "kinesis.startingPosition" -> "TRIM_HORIZON",
    "kinesis.awsAccessKeyId" -> TestStreams.AccessKeyId,
    "awsSecretKey" -> SecretKey,
    "kinesis.sessionToken" -> SessionToken) ++ role("roleExternalId", SourceExternalId)

  /** The sink's: a provider class with its parameter, and a role with an external id. */
  def sinkOptions(stream: String): Map[String, String] = SinkHarness.sinkOptions(Some(stream)) --
    Seq("kinesis.awsAccessKeyId", "kinesis.awsSecretKey") ++ Map(
      "kinesis.credentialProviderClass" -> classOf[ParamCredentialsProvider].getName,
      "kinesis.credentialProviderParam" -> ProviderParam) ++ role("kinesis.stsExternalId", SinkExternalId)
}

/** A user's credentials provider built with kinesis.credentialProviderParam; the emulators accept any keys. */
final class ParamCredentialsProvider(param: String) extends AwsCredentialsProvider {
  require(param == Secrets.ProviderParam, "the provider was not handed kinesis.credentialProviderParam")
  override def resolveCredentials(): AwsCredentials = AwsBasicCredentials.create(TestStreams.AccessKeyId, "base-key")
}

/**
 * The child JVM of [[SecretsInPlansSuite]]: a session with an event log and extended plans in it (as the SQL tab shows
 * them), a streaming query from Kinesis to Kinesis with secret options on both sides, a batch read and write alike, and
 * every plan's `explain(extended = true)` written to a file. Arguments: event log directory, source stream, target
 * stream, checkpoint directory, explain output file.
 */
object SecretsDriver {
  def main(args: Array[String]): Unit = {
    val Array(eventLogDir, source, target, checkpoint, explainFile) = args
    val spark = SparkSession.builder().master("local[2]").appName("it-secrets-in-plans")
      .config("spark.ui.enabled", "false")
      .config("spark.eventLog.enabled", "true")
      .config("spark.eventLog.dir", new File(eventLogDir).toURI.toString)
      // Spark 4 compresses event logs by default; the test reads them as text.
      .config("spark.eventLog.compress", "false")
      .config("spark.sql.ui.explainMode", "extended")
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .getOrCreate()
    val explained = new ByteArrayOutputStream()
    def explain(what: String)(body: => Unit): Unit = {
      explained.write(s"== $what ==\n".getBytes(UTF_8))
      Console.withOut(explained)(body)
    }

    val stream = spark.readStream.format("aws-kinesis").options(Secrets.sourceOptions(source)).load()
    explain("streaming source")(stream.explain(true))
    val query = stream.selectExpr("data", "partitionKey").writeStream.format("aws-kinesis")
      .options(Secrets.sinkOptions(target)).option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow()).start()
    query.awaitTermination()
    explain("streaming query")(query.explain(true))

    val batch = spark.read.format("aws-kinesis").options(Secrets.sourceOptions(source)).load()
    explain("batch read")(batch.explain(true))
    batch.selectExpr("data", "partitionKey").write.format("aws-kinesis").options(Secrets.sinkOptions(target))
      .mode("append").save()

    Files.write(new File(explainFile).toPath, explained.toByteArray)
    println(s"SecretsDriver: done, ${spark.conf.get("spark.sql.redaction.options.regex")}")
    spark.stop()
  }
}
