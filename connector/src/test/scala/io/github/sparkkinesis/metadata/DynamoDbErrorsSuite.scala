package io.github.sparkkinesis.metadata

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.core.exception.{AbortedException, SdkClientException}
import software.amazon.awssdk.services.dynamodb.DynamoDbClient
import software.amazon.awssdk.services.dynamodb.model.{DescribeTableRequest, DescribeTableResponse, DynamoDbException}

import io.github.sparkkinesis.client.{AwsCredentials, ClientSettings, RetrySettings}
import io.github.sparkkinesis.client.SignedRequestErrors._

/** The DynamoDB store's failures as users see them: what to check, and never a secret or a signed request. */
class DynamoDbErrorsSuite extends AnyFunSuite with Matchers {

  private val settings = ClientSettings(Some("us-east-1"), None, None, RetrySettings(0, 1, 1))

  private def serviceError(status: Int, code: String, message: String): AwsServiceException =
    DynamoDbException.builder().statusCode(status).requestId("req-7").message(message)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("DynamoDB").build())
      .build()

  private def failureOf(
      e: Throwable,
      errors: DynamoDbErrors = new DynamoDbErrors(DynamoDbTable("meta", None), settings)): Throwable =
    intercept[IllegalStateException](errors.call("GetItem")(throw e))

  test("given a call aborted because its thread was interrupted (a query being stopped), when the store meets it, " +
    "then it is an interruption, which Spark takes for a stop, not a failure") {
    val errors = new DynamoDbErrors(DynamoDbTable("meta", None), settings)
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
    val errors = new DynamoDbErrors(DynamoDbTable("meta", None), withSecrets)
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

  /** A client whose DescribeTable fails as the SDK's does when nothing answers: no HTTP response, `cause` below. */
  private final class Unreachable(cause: Throwable) extends DynamoDbAccess {
    override def use[T](settings: ClientSettings, endpoint: Option[URI])(call: DynamoDbClient => T): T =
      call(new DynamoDbClient {
        override def serviceName(): String = "dynamodb"
        override def close(): Unit = ()
        override def describeTable(request: DescribeTableRequest): DescribeTableResponse =
          throw SdkClientException.builder().message(s"Unable to execute HTTP request: ${cause.getMessage}")
            .cause(cause).build()
      })
  }

  test("given a DynamoDB endpoint that refuses connections, or a host name that does not resolve, when the store " +
    "opens its table, then the message names kinesis.dynamodb.endpointUrl (or the region's endpoint and " +
    "kinesis.region), echoes the endpoint and says what to check") {
    // Given
    val refused = new Unreachable(new java.net.ConnectException("Connection refused"))
    val unknown =
      new Unreachable(new java.net.UnknownHostException("dynamodb.nowhere.example: Name or service not known"))

    // When
    def failure(table: DynamoDbTable, access: DynamoDbAccess) =
      intercept[IllegalStateException](table.ensure(settings, access)).getMessage
    val atEndpoint = failure(DynamoDbTable("meta", Some(URI.create("http://localhost:8000"))), refused)
    val atRegion = failure(DynamoDbTable("meta", None), unknown)

    // Then
    atEndpoint shouldBe "Cannot reach DynamoDB at http://localhost:8000 (option kinesis.dynamodb.endpointUrl) for " +
      "DescribeTable on table meta (option kinesis.dynamodb.tableName, the metadata store): the connection was " +
      "refused (nothing listens there). Check option kinesis.dynamodb.endpointUrl (unset means the DynamoDB " +
      "endpoint of kinesis.region) and that the driver and executors can reach it (DNS, proxy, VPC endpoint, " +
      "security groups). SDK said: Unable to execute HTTP request: Connection refused"
    atRegion should startWith("Cannot reach DynamoDB at https://dynamodb.us-east-1.amazonaws.com (the DynamoDB " +
      "endpoint of option kinesis.region) for DescribeTable on table meta (option kinesis.dynamodb.tableName, the " +
      "metadata store): the host name does not resolve (dynamodb.nowhere.example: Name or service not known). " +
      "Check option kinesis.dynamodb.endpointUrl")
  }

  test("given a DynamoDB endpoint with user info and a query string that refuses connections, when the store opens " +
    "its table, then the message names the option and echoes the endpoint's host, port and path, never the user " +
    "info or the query") {
    // Given
    val endpoint = URI.create("https://store-user:Zq7pw-4242@dynamodb.internal.example:8443/ddb?X-Amz-Signature=Zq7sig")

    // When
    val message = intercept[IllegalStateException](DynamoDbTable("meta", Some(endpoint))
      .ensure(settings, new Unreachable(new java.net.ConnectException("Connection refused")))).getMessage

    // Then
    message should startWith("Cannot reach DynamoDB at https://<redacted>@dynamodb.internal.example:8443/ddb?" +
      "<redacted> (option kinesis.dynamodb.endpointUrl) for DescribeTable on table meta")
    Seq("store-user", "Zq7pw-4242", "Zq7sig").foreach(secret => message should not include secret)
  }
}
