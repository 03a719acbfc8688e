package io.github.sparkkinesis.client

import java.net.URI
import java.time.Duration

import org.scalatest.LoneElement
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.auth.credentials.{AwsCredentials => SdkCredentials, AwsSessionCredentials}

/** Assumed roles (against a local STS stub that enforces an external id) and user provider classes. */
class CredentialsProvidersSuite extends AnyFunSuite with Matchers with LoneElement {

  private val RoleArn = "arn:aws:iam::123456789012:role/reader"
  private val base = AwsCredentials("AKIDBASE", "base-secret-key", None)

  private def settings(sts: StsStub, externalId: Option[String]) =
    ClientSettings(
      Some("us-east-1"),
      Some(sts.endpoint),
      Some(base),
      RetrySettings(0, 1, 1),
      assumeRole = Some(AssumeRoleSettings(RoleArn, "query-7", externalId, Some(sts.endpoint))))

  private def withStub[T](externalId: Option[String], validFor: Duration = Duration.ofHours(1))(f: StsStub => T): T = {
    val sts = new StsStub(externalId, validFor)
    try f(sts)
    finally sts.close()
  }

  private def resolve(provider: software.amazon.awssdk.auth.credentials.AwsCredentialsProvider): SdkCredentials =
    try provider.resolveCredentials()
    finally provider match {
        case c: AutoCloseable => c.close()
        case _ =>
      }

  test(
    "Given a role demanding an external id, when it is assumed with that id, then its session credentials come back") {
    withStub(Some("ext-42")) { sts =>
      // When
      val credentials = resolve(CredentialsProviders.of(settings(sts, Some("ext-42"))))

      // Then: the role's credentials, asked for with the role, session name and external id, signed by the base keys
      credentials shouldBe a[AwsSessionCredentials]
      credentials.accessKeyId shouldBe "ASIASTUB1"
      val (form, authorization) = sts.requests.loneElement
      form should contain allOf (
        "Action" -> "AssumeRole",
        "RoleArn" -> RoleArn,
        "RoleSessionName" -> "query-7",
        "ExternalId" -> "ext-42")
      authorization.get should include("Credential=AKIDBASE/")
    }
  }

  test("Given a role without external id in its trust policy, when it is assumed without one, then no id is sent") {
    withStub(None) { sts =>
      resolve(CredentialsProviders.of(settings(sts, None))).accessKeyId shouldBe "ASIASTUB1"
      sts.requests.loneElement._1.keySet should not contain "ExternalId"
    }
  }

  test("Given AccessDenied on AssumeRole, when a Kinesis call needs credentials, then it fails naming the role and " +
    "options, no secret") {
    withStub(Some("ext-42")) { sts =>
      // Given a role whose trust policy wants an external id the options do not give
      val client = new SdkKinesisClient(settings(sts, None))
      try {
        // When a call is made (the Kinesis endpoint is never reached: signing needs the role's credentials first)
        val e = the[AccessException] thrownBy client.listShards("orders")

        // Then
        Seq(
          RoleArn,
          "kinesis.stsRoleArn",
          "AccessDenied",
          "HTTP 403",
          "kinesis.stsExternalId",
          "stream 'orders'",
          "not authorized to perform: sts:AssumeRole").foreach(e.getMessage should include(_))
        e.getMessage should not include "base-secret-key"
        e.getCause shouldBe null
      } finally client.close()
    }
  }

  test("Given credentials inside the stale window of their expiry, when they are asked for again, then the role is " +
    "assumed again") {
    withStub(None, validFor = Duration.ofSeconds(30)) { sts =>
      // Given sessions that expire within the one-minute stale window, as a long query's session eventually does
      val provider = new AssumedRoleProvider(
        settings(sts, None).assumeRole.get,
        CredentialsProviders.of(
          settings(sts, None).copy(assumeRole = None)),
        software.amazon.awssdk.regions.Region.US_EAST_1,
        AssumedRoleProvider.Refresh.Default.copy(inBackground = false))
      try {
        // When credentials are asked for twice
        val first = provider.resolveCredentials().accessKeyId
        val second = provider.resolveCredentials().accessKeyId

        // Then each call renewed the session before it could expire
        (first, second) shouldBe (("ASIASTUB1", "ASIASTUB2"))
      } finally provider.close()
    }
  }

  test("Given a session far from expiry, when credentials are asked for again, then the cached session is reused") {
    withStub(None) { sts =>
      val provider = CredentialsProviders.of(settings(sts, None))
      try {
        Seq.fill(3)(provider.resolveCredentials().accessKeyId).distinct shouldBe Seq("ASIASTUB1")
        sts.requests should have size 1
      } finally provider.asInstanceOf[AutoCloseable].close()
    }
  }

  private val noRole = ClientSettings(Some("us-east-1"), None, None, RetrySettings(0, 1, 1))

  test(
    "Given a provider class of the connector's SDK with a parameter, when loaded, then it is built with the " +
      "parameter") {
    val provider = CredentialsProviders.of(noRole.copy(providerClass =
      Some(ProviderClassSettings(classOf[ParamCredentialsProvider].getName, Some("from-param")))))
    resolve(provider).accessKeyId shouldBe "AKID-from-param"
  }

  test("Given a provider class of another copy of the SDK, when loaded, then its credentials are read by reflection") {
    // Given a class with resolveCredentials() but not the connector's interface, as a user's unshaded SDK class is
    val provider = CredentialsProviders.of(noRole.copy(providerClass =
      Some(ProviderClassSettings(classOf[LookalikeCredentialsProvider].getName, None))))

    // When / Then
    val credentials = resolve(provider)
    credentials shouldBe a[AwsSessionCredentials]
    (credentials.accessKeyId, credentials.secretAccessKey) shouldBe (("AKIDLOOKALIKE", "lookalike-secret"))
  }

  test(
    "Given a missing class, one of the wrong type or without the constructor, when checked, then the option is named") {
    def problem(name: String, param: Option[String] = None) =
      (the[IllegalArgumentException] thrownBy UserCredentialsProvider.check(ProviderClassSettings(name, param)))
        .getMessage

    problem("com.example.Missing") should (include("kinesis.credentialProviderClass") and
      include("com.example.Missing") and include("--jars"))
    problem("java.lang.StringBuilder") should include("does not implement AwsCredentialsProvider")
    problem(classOf[ParamCredentialsProvider].getName) should include("no public no-argument constructor")
    problem(classOf[LookalikeCredentialsProvider].getName, Some("x")) should include(
      "no public constructor taking one String")
  }

  test("Given settings naming a role and a provider class, when printed, then the parameter stays hidden") {
    val s = noRole.copy(
      providerClass = Some(ProviderClassSettings("com.example.P", Some("vault-token-123"))),
      assumeRole = Some(AssumeRoleSettings(RoleArn, "s", Some("ext"), Some(URI.create("http://127.0.0.1:1")))))
    s.toString should (include("com.example.P") and include(RoleArn) and not include "vault-token-123")
    CredentialsProviders.origin(s) should (include(RoleArn) and include("kinesis.credentialProviderClass"))
    CredentialsProviders.secrets(s) should contain("vault-token-123")
  }
}

/** A provider of the connector's (here: the test's) SDK, built with a parameter. */
final class ParamCredentialsProvider(param: String)
    extends software.amazon.awssdk.auth.credentials.AwsCredentialsProvider {
  override def resolveCredentials(): SdkCredentials =
    software.amazon.awssdk.auth.credentials.AwsBasicCredentials.create(s"AKID-$param", "param-secret")
}

/** Shaped like a provider of another copy of the SDK: resolveCredentials() without the connector's interface. */
final class LookalikeCredentialsProvider {
  def resolveCredentials(): LookalikeCredentials = new LookalikeCredentials
}

final class LookalikeCredentials {
  def accessKeyId(): String = "AKIDLOOKALIKE"
  def secretAccessKey(): String = "lookalike-secret"
  def sessionToken(): String = "lookalike-token"
}
