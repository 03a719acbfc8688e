package io.github.sparkkinesis.options

import java.net.URI

import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.KinesisSourceProvider
import io.github.sparkkinesis.client.{
  AssumeRoleSettings,
  ParamCredentialsProvider,
  ProviderClassSettings,
  UserCredentialsProvider
}
import io.github.sparkkinesis.compat.JavaCollections._

/** The identity options: assumed roles and provider classes, checked when the DataFrame is created. */
class CredentialsOptionsSuite extends AnyFunSuite with Matchers {

  private val source = Map("kinesis.streamName" -> "orders")
  private val RoleArn = "arn:aws:iam::123456789012:role/cross-account/reader"

  private def failure(options: Map[String, String]): String =
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(source ++ options)).getMessage

  test("given a role with external id and STS endpoint, when parsed, then source and sink get the same role settings") {
    // Given
    val options = Map(
      "kinesis.stsRoleArn" -> RoleArn,
      "kinesis.stsExternalId" -> "ext-42",
      "kinesis.stsEndpointUrl" -> "https://sts.eu-west-1.amazonaws.com")

    // When
    val read = KinesisSourceOptions.parse(source ++ options).client
    val write = KinesisSinkOptions.parse(options).client

    // Then
    val expected = Some(AssumeRoleSettings(
      RoleArn,
      "spark-kinesis",
      Some("ext-42"),
      Some(URI.create("https://sts.eu-west-1.amazonaws.com"))))
    read.assumeRole shouldBe expected
    write.assumeRole shouldBe expected
    KinesisSourceOptions.parse(source + ("kinesis.stsSessionName" -> "q7", "kinesis.stsRoleArn" -> RoleArn))
      .client.assumeRole.get.sessionName shouldBe "q7"
  }

  test("given a malformed role ARN, when parsed, then load() fails naming the option and echoing the value") {
    val message = failure(Map("kinesis.stsRoleArn" -> "arn:aws:iam::12345:user/reader"))
    Seq(
      "kinesis.stsRoleArn",
      "arn:aws:iam::12345:user/reader",
      "it is not an IAM role ARN",
      "arn:aws:iam::123456789012:role/").foreach(message should include(_))
  }

  test("given STS options without a role, when parsed, then the rule names both options") {
    failure(Map("kinesis.stsExternalId" -> "ext-42")) should (include("kinesis.stsExternalId") and
      include("kinesis.stsRoleArn"))
    failure(Map("kinesis.stsEndpointUrl" -> "http://127.0.0.1:1")) should include("kinesis.stsRoleArn")
  }

  test("given a provider class with its parameter, when parsed, then it is loaded now and its parameter hidden") {
    val client = KinesisSourceOptions.parse(source ++ Map(
      "kinesis.credentialProviderClass" -> classOf[ParamCredentialsProvider].getName,
      "kinesis.credentialProviderParam" -> "vault-token")).client
    client.providerClass shouldBe Some(ProviderClassSettings(
      classOf[ParamCredentialsProvider].getName,
      Some("vault-token")))
    client.toString should not include "vault-token"
  }

  test("given a provider class that is missing, when parsed, then the DataFrame is refused naming the option") {
    failure(Map("kinesis.credentialProviderClass" -> "com.example.Nope")) should (
      include("kinesis.credentialProviderClass") and include("com.example.Nope") and include("class path"))
  }

  test("given keys and a provider class together, or a parameter alone, when parsed, then the conflict is named") {
    failure(Map(
      "kinesis.awsAccessKeyId" -> "AKID",
      "kinesis.awsSecretKey" -> "s",
      "kinesis.credentialProviderClass" -> classOf[ParamCredentialsProvider].getName)) should (
      include("kinesis.awsAccessKeyId") and include("kinesis.credentialProviderClass") and include("keep one"))
    val message = failure(Map("kinesis.credentialProviderParam" -> "secret-param-value"))
    message should include("kinesis.credentialProviderClass")
    message should not include "secret-param-value"
  }

  test("Given static keys and kinesis.credentialProviderClass naming a real provider class (the AWS SDK's, or the " +
    "user's), when a source DataFrame is created through Spark's entry point, or a sink parses its options, then " +
    "the conflict itself is refused, naming both options and what to keep") {
    // Given classes that load and implement AwsCredentialsProvider, so the check of the class passes
    val sdkProvider = "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"
    val keys = Map("kinesis.awsAccessKeyId" -> "AKIDEXAMPLE", "kinesis.awsSecretKey" -> "Zq7-secret")
    Seq(sdkProvider, classOf[ParamCredentialsProvider].getName).foreach { cls =>
      UserCredentialsProvider.loadClass(cls).isRight shouldBe true
      val given = keys + ("kinesis.credentialProviderClass" -> cls)

      // When
      val read = intercept[IllegalArgumentException](new KinesisSourceProvider().inferSchema(
        new CaseInsensitiveStringMap((source ++ given).asJava))).getMessage
      val write = intercept[IllegalArgumentException](KinesisSinkOptions.parse(given)).getMessage

      // Then
      Seq(read, write).foreach(_ shouldBe "Options kinesis.awsAccessKeyId and kinesis.credentialProviderClass both " +
        "name base credentials: keep one (the keys, or the provider class).")
    }
  }
}
