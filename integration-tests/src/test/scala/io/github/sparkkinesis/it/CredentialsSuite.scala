package io.github.sparkkinesis.it

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import org.apache.spark.sql.streaming.StreamingQueryException
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import SinkHarness.{keyed, readBack, sinkOptions}

/**
 * Identities through the shaded JAR, with moto's STS: an assumed role for the source and the sink (the KPL), and a
 * pod's web identity found by the default chain. kinesis-mock keeps one account per 12-digit access key id, and STS's
 * temporary keys land in the default account where the test streams are: base keys of another account read a stream
 * only if the role's credentials are the ones used.
 */
class CredentialsSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private val OtherAccountKeyId = "210987654321"

  private def roleOptions(extra: (String, String)*): Seq[(String, String)] = Seq(
    "kinesis.awsAccessKeyId" -> OtherAccountKeyId,
    "kinesis.awsSecretKey" -> "base-secret",
    "kinesis.stsRoleArn" -> "arn:aws:iam::123456789012:role/cross-account-reader",
    "kinesis.stsSessionName" -> "it-credentials",
    "kinesis.stsEndpointUrl" -> Moto.endpoint) ++ extra

  test("Given static keys and kinesis.credentialProviderClass naming a provider class on the classpath, when a " +
    "source or a sink DataFrame is created, then the shaded connector refuses the conflict, naming both options") {
    // Given a user's class implementing the application's (unrelocated) AwsCredentialsProvider
    val conflicting = Map(
      "kinesis.awsAccessKeyId" -> OtherAccountKeyId,
      "kinesis.awsSecretKey" -> "base-secret",
      "kinesis.credentialProviderClass" -> classOf[ParamCredentialsProvider].getName)

    // When
    def refusal(body: => Unit): String = Iterator.iterate[Throwable](intercept[Exception](body))(_.getCause)
      .takeWhile(_ != null).map(_.getMessage).mkString(" / ")
    val read = refusal(spark.readStream.format("aws-kinesis")
      .options(SparkHarness.kinesisOptions("it-unused", "TRIM_HORIZON") ++ conflicting).load())
    val written = refusal(spark.range(1).selectExpr("'k' AS partitionKey", "'v' AS data").write.format("aws-kinesis")
      .options(sinkOptions(Some("it-unused")) ++ conflicting).save())

    // Then
    Seq(read, written).foreach(_ should include("Options kinesis.awsAccessKeyId and kinesis.credentialProviderClass " +
      "both name base credentials: keep one (the keys, or the provider class)."))
  }

  test("Given base keys of an account without the stream, when a role is assumed, then the query reads with the role") {
    // Given a stream in the role's account, and base keys that alone do not see it
    val stream = TestStreams.createStream("it-role", shards = 2)
    val puts = TestStreams.putStrings(stream, TestStreams.testRecords("role", 200, keys = 10))
    val baseOnly = readKinesis(stream, "TRIM_HORIZON", roleOptions().take(2): _*).writeStream.format("noop")
      .option("checkpointLocation", newCheckpointDir()).start()
    val refused = the[StreamingQueryException] thrownBy baseOnly.awaitTermination(60000)
    refused.getMessage should include("does not exist")

    // When the same base keys assume a role (with an external id) through STS
    val (query, sink) =
      startCollecting(readKinesis(stream, "TRIM_HORIZON", roleOptions("kinesis.stsExternalId" -> "it-external-id"): _*))

    // Then every record is read once
    assertReadsExactly(query, sink, puts)
  }

  test(
    "Given base keys of another account, when the sink assumes a role, then the KPL writes with the role's " +
      "credentials") {
    // Given
    val stream = TestStreams.createStream("it-role-sink", shards = 2)
    val rows = (0 until 300).map(i => (s"key-${i % 7}", s"role-row-$i"))
    val session = spark
    import session.implicits._

    // When
    rows.toDF("partitionKey", "data").write.format("aws-kinesis").mode("append")
      .options(sinkOptions(Some(stream)) ++ roleOptions()).save()

    // Then
    RecordChecks.assertExactlyOnce(rows, keyed(readBack(stream)._1), s"rows in $stream")
  }

  test("Given only a web identity in the environment, when a child JVM reads and writes, then the shaded SDK's " +
    "default chain assumes the role") {
    /* Given a token file and a role in the environment, as EKS gives a pod (IRSA), STS at moto, and no other
     * credentials */
    val source = TestStreams.createStream("it-web-identity", shards = 2)
    val target = TestStreams.createStream("it-web-identity-copy", shards = 1)
    val puts = TestStreams.putStrings(source, TestStreams.testRecords("web", 100, keys = 5))
    val dir = newDir("web-identity")
    val token = new File(dir, "token")
    Files.write(token.toPath, "eyJhbGciOiJSUzI1NiJ9.test-oidc-token.signature".getBytes(UTF_8))
    val missing = new File(dir, "no-such-file").getAbsolutePath
    val env = Map(
      "AWS_WEB_IDENTITY_TOKEN_FILE" -> Some(token.getAbsolutePath),
      "AWS_ROLE_ARN" -> Some("arn:aws:iam::123456789012:role/pod-reader"),
      "AWS_ROLE_SESSION_NAME" -> Some("it-pod"),
      "AWS_ENDPOINT_URL_STS" -> Some(Moto.endpoint),
      "AWS_REGION" -> Some(TestStreams.Region),
      "AWS_CONFIG_FILE" -> Some(missing),
      "AWS_SHARED_CREDENTIALS_FILE" -> Some(missing),
      "AWS_EC2_METADATA_DISABLED" -> Some("true"),
      "AWS_ACCESS_KEY_ID" -> None,
      "AWS_SECRET_ACCESS_KEY" -> None,
      "AWS_SESSION_TOKEN" -> None,
      "AWS_PROFILE" -> None)

    // When the child reads the stream to its end and copies it with no credentials options
    val log = new File(dir, "child.log")
    val child = ChildJvm.startWith(WebIdentityDriver, log, env, source, target, newCheckpointDir())
    if (!child.waitFor(240, TimeUnit.SECONDS)) {
      child.destroyForcibly()
      fail(s"the child JVM did not finish within 240 s; ${ChildJvm.tail(log)}")
    }

    // Then it succeeded, and the copy holds every record once
    withClue(ChildJvm.tail(log)) { child.exitValue() shouldBe 0 }
    ChildJvm.output(log) should include(s"copied ${puts.size} rows")
    RecordChecks.assertExactlyOnce(
      puts.map(p => (p.partitionKey, p.payload)),
      keyed(readBack(target)._1),
      s"rows copied to $target")
  }
}
