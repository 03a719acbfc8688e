package io.github.sparkkinesis.options

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** Which options' values Spark must hide in plans, and how the session's redaction pattern comes to hide them. */
class PlanRedactionSuite extends AnyFunSuite with Matchers with BeforeAndAfterAll {

  private lazy val base = SparkSession.builder().master("local[1]").appName("plan-redaction")
    .config("spark.ui.enabled", "false").getOrCreate()

  override protected def afterAll(): Unit =
    try base.stop()
    finally super.afterAll()

  /** Runs `body` with a new session (its own SQL conf) active. */
  private def inSession[T](body: SparkSession => T): T = {
    val session = base.newSession()
    SparkSession.setActiveSession(session)
    try body(session)
    finally SparkSession.clearActiveSession()
  }

  private def hides(key: String): Boolean = !SQLConf.get.redactOptions(Map(key -> "v")).get(key).contains("v")

  test("the secret options are the registry's, with every alias spelling of them") {
    PlanRedaction.secretKeys should contain allOf (
      "kinesis.awsaccesskeyid",
      "kinesis.awssecretkey",
      "kinesis.sessiontoken",
      "kinesis.credentialproviderparam",
      "kinesis.stsexternalid",
      "roleexternalid",
      "awssecretkey",
      "awsaccesskey",
      "awsaccesskeyid")
    PlanRedaction.secretKeys should not contain "kinesis.streamname"
    val pattern = PlanRedaction.secretKeysPattern.r
    pattern.findFirstIn("kinesis.CredentialProviderParam") shouldBe defined
    pattern.findFirstIn("roleExternalId") shouldBe defined
    Seq("kinesis.stsRoleArn", "kinesis.streamName", "kinesis.endpointUrl", "kinesis.stsExternalIdentity")
      .foreach(k => withClue(k)(pattern.findFirstIn(k) shouldBe None))
  }

  test("Given Spark's default patterns, when secret options they miss are given, then the session's pattern is " +
    "extended to hide them, keeping the user's, once") {
    inSession { session =>
      hides("kinesis.credentialProviderParam") shouldBe false
      PlanRedaction.ensureHidden(Seq("kinesis.streamName", "kinesis.credentialProviderParam", "roleExternalId"))
      Seq("kinesis.credentialProviderParam", "roleExternalId", "kinesis.stsExternalId", "kinesis.endpointUrl")
        .foreach(k => withClue(k)(hides(k) shouldBe true))
      hides("kinesis.streamName") shouldBe false
      val extended = session.conf.get(PlanRedaction.RegexKey)
      extended should startWith("(?:(?i)url)|")
      PlanRedaction.ensureHidden(Seq("kinesis.stsExternalId"))
      session.conf.get(PlanRedaction.RegexKey) shouldBe extended
    }
  }

  test("Given a session whose pattern already hides the secret options, or none given, then it is left alone") {
    inSession { session =>
      session.conf.set(PlanRedaction.RegexKey, "(?i)url|param|externalid")
      PlanRedaction.ensureHidden(Seq("kinesis.credentialProviderParam", "kinesis.stsExternalId"))
      PlanRedaction.ensureHidden(Seq("kinesis.streamName"))
      session.conf.get(PlanRedaction.RegexKey) shouldBe "(?i)url|param|externalid"
    }
  }

  test("Given no active session and a secret option Spark's patterns miss, when options are given twice, then it " +
    "warns once, naming the option and the setting that would hide it, and fails nothing") {
    // Given
    SparkSession.clearActiveSession()
    val extender = new RedactionExtender((_, _) => fail("no session to set"))

    // When
    val first = extender.ensureHidden(Seq("kinesis.streamName", "kinesis.credentialProviderParam"), None)
    val second = extender.ensureHidden(Seq("kinesis.stsExternalId"), None)

    // Then
    first.getOrElse(fail("no warning")) should (include("kinesis.credentialproviderparam") and
      include("no Spark session is active") and include(s"set ${PlanRedaction.RegexKey} to '(?:(?i)url)|"))
    second shouldBe None
  }

  test("Given a session that refuses to change its redaction pattern, when a secret option it misses is given, then " +
    "the options are accepted with a warning naming the setting and the session's reason") {
    inSession { session =>
      // Given
      val refusing = new RedactionExtender((_, _) => throw new IllegalStateException("CONFIG_NOT_AVAILABLE here"))

      // When
      val warning = refusing.ensureHidden(Seq("roleExternalId"), Some(session))

      // Then
      warning.getOrElse(fail("no warning")) should (include("roleexternalid") and include(
        "CONFIG_NOT_AVAILABLE here") and
        include(s"set ${PlanRedaction.RegexKey} to '(?:(?i)url)|"))
      session.conf.get(PlanRedaction.RegexKey) shouldBe "(?i)url"
    }
  }
}
