package io.github.sparkkinesis.metadata

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.core.exception.{AbortedException, SdkClientException}
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException

import io.github.sparkkinesis.client.{AwsCredentials, ClientSettings, RetrySettings}
import io.github.sparkkinesis.client.SignedRequestErrors._

/** The DynamoDB store's failures as users see them: what to check, and never a secret or a signed request. */
class DynamoDbErrorsSuite extends AnyFunSuite with Matchers {

  private val settings = ClientSettings(Some("us-east-1"), None, None, RetrySettings(0, 1, 1))

  private def serviceError(status: Int, code: String, message: String): AwsServiceException =
    DynamoDbException.builder().statusCode(status).requestId("req-7").message(message)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("DynamoDB").build())
      .build()

  private def failureOf(e: Throwable, errors: DynamoDbErrors = new DynamoDbErrors("meta", settings)): Throwable =
    intercept[IllegalStateException](errors.call("GetItem")(throw e))

  test("given a call aborted because its thread was interrupted (a query being stopped), when the store meets it, " +
    "then it is an interruption, which Spark takes for a stop, not a failure") {
    val errors = new DynamoDbErrors("meta", settings)
    val aborted = AbortedException.builder().message("Thread was interrupted")
      .cause(new InterruptedException("sleep interrupted")).build()
    val thrown = intercept[InterruptedException](errors.call("BatchGetItem")(throw aborted))
    thrown.getMessage should include("BatchGetItem")
  }

  test("signature and token errors of HTTP 400 say the credentials were rejected and keep no signed request in " +
    "their message or causes") {
    // Given DynamoDB's refusals of a request signed with a role's token
    val refusals = Seq(
      serviceError(400, "InvalidSignatureException", Mismatch),
      serviceError(400, "IncompleteSignatureException", Headers),
      serviceError(400, "UnrecognizedClientException", Headers),
      serviceError(400, "ExpiredTokenException", Mismatch),
      serviceError(400, "MissingAuthenticationTokenException", Headers))

    // When the store meets them
    val failures = refusals.map(failureOf(_))

    // Then each names the table and the credentials, and no text along its causes shows the token or signature
    failures.foreach { f =>
      withClue(allText(f))(clean(allText(f)) shouldBe true)
      f.getMessage should (include("table meta") and include("credentials were rejected"))
    }
  }

  test("other failures keep a cause, scrubbed of signed requests and of the secrets the options gave") {
    // Given keys and an external id from the options, and failures whose texts quote them or a signed request
    val withSecrets = settings.copy(credentials = Some(AwsCredentials("AKID", "opt-secret-key", Some("opt-token"))))
    val errors = new DynamoDbErrors("meta", withSecrets)
    val failures = Seq(
      serviceError(500, "InternalServerError", s"failed for opt-secret-key\n$Headers"),
      SdkClientException.builder().message(s"Unable to execute HTTP request: opt-token $Headers").build())

    // When the store meets them
    val translated = failures.map(failureOf(_, errors))

    // Then the causes are kept for their stack traces, with every secret removed
    translated.foreach { f =>
      f.getCause should not be null
      val text = allText(f)
      withClue(text)(clean(text) shouldBe true)
      text should (not include "opt-secret-key" and not include "opt-token")
    }
  }

  test("a cause without secrets is kept as it was") {
    val throttled = serviceError(400, "ProvisionedThroughputExceededException", "Rate of requests exceeds the allowed")
    failureOf(throttled).getCause shouldBe throttled
  }
}
