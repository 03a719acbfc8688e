package io.github.sparkkinesis.client

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class ClientSettingsSuite extends AnyFunSuite with Matchers {

  private val credentials = AwsCredentials("AKIDEXAMPLEKEY", "wJalrXUtnFEMI/SECRET", Some("SESSION/TOKEN=="))

  test("toString of credentials and of settings holding them shows no part of them") {
    // Given settings with static credentials and a session token
    val settings = ClientSettings(
      Some("eu-west-1"),
      Some(URI.create("http://127.0.0.1:4568")),
      Some(credentials),
      RetrySettings(3, 100, 2000))

    // When they are printed
    val printed = Seq(credentials.toString, settings.toString, Some(credentials).toString)

    // Then neither the key id, the secret nor the token appears, while the rest stays readable
    printed.foreach { text =>
      text should not include "AKIDEXAMPLEKEY"
      text should not include "SECRET"
      text should not include "SESSION"
      text should include("<redacted>")
    }
    settings.toString should include("eu-west-1")
    settings.toString should include("127.0.0.1:4568")
  }

  test("retry settings reject negative retries and inverted delays, naming the field") {
    // Given / When / Then
    the[IllegalArgumentException] thrownBy RetrySettings(-1, 100, 200) should have message
      "requirement failed: RetrySettings.numRetries must be 0 or more, got -1"
    (the[IllegalArgumentException] thrownBy RetrySettings(1, 0, 200)).getMessage should include("baseDelayMs")
    (the[IllegalArgumentException] thrownBy RetrySettings(1, 300, 200)).getMessage should include("maxDelayMs (200)")
    RetrySettings(0, 1, 1).numRetries shouldBe 0
  }
}
