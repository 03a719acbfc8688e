package io.github.sparkkinesis.metadata

import scala.util.control.NonFatal

import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.exception.AbortedException
import software.amazon.awssdk.services.dynamodb.model.{ConditionalCheckFailedException, ResourceNotFoundException}

import io.github.sparkkinesis.client.{
  ClientSettings,
  CredentialsProviders,
  CredentialsUnavailable,
  ErrorText,
  SdkErrors
}

/**
 * Turns the DynamoDB store's failures into messages that name the table (or, when nothing answers, the endpoint), the
 * option and the permission to grant, never a secret. A failed conditional put passes through untouched: it is how the
 * store learns it lost a race.
 */
private[metadata] final class DynamoDbErrors(dynamoDbTable: DynamoDbTable, settings: ClientSettings) {
  private val secrets = CredentialsProviders.secrets(settings)
  private val table = dynamoDbTable.name

  /** The endpoint the store's client calls, as messages name it: the option's, else the region's. */
  private val endpoint =
    dynamoDbTable.endpoint.map(u => s"${ErrorText.endpoint(u)} (option kinesis.dynamodb.endpointUrl)").getOrElse(
      settings.region.fold("the DynamoDB endpoint of the default region chain's region (option kinesis.region unset)")(
        r => s"https://dynamodb.$r.amazonaws.com (the DynamoDB endpoint of option kinesis.region)"))

  def call[T](operation: String)(body: => T): T =
    try body
    catch {
      case e: ConditionalCheckFailedException => throw e
      // Spark stops a query by interrupting its threads; it must see an interruption, not a failed store.
      case e: AbortedException if Thread.currentThread().isInterrupted || isInterruption(e) =>
        throw new InterruptedException(s"DynamoDB $operation on table $table was interrupted")
      case NonFatal(e) => throw translate(operation, e)
    }

  private def isInterruption(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).exists {
      case _: InterruptedException | _: java.io.InterruptedIOException => true
      case _ => false
    }

  private def translate(operation: String, e: Throwable): Throwable = {
    val where = s"DynamoDB $operation on table $table (option kinesis.dynamodb.tableName, the metadata store)"
    val credentials = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10)
      .collectFirst { case c: CredentialsUnavailable => c }
    (credentials, e) match {
      case (Some(c), _) => new IllegalStateException(s"No credentials for $where: ${scrub(c.getMessage)}")
      case (_, ex) if SdkErrors.unreachable(ex).isDefined =>
        new IllegalStateException(
          s"Cannot reach DynamoDB at $endpoint for $operation on table $table (option kinesis.dynamodb.tableName, " +
            s"the metadata store): ${SdkErrors.unreachable(ex).get}. Check option kinesis.dynamodb.endpointUrl " +
            "(unset means the DynamoDB endpoint of kinesis.region) and that the driver and executors can reach it " +
            "(DNS, proxy, VPC endpoint, security groups). SDK said: " +
            scrub(firstLine(String.valueOf(ex.getMessage))),
          ErrorText.safeCause(ex, secrets))
      case (_, ex: ResourceNotFoundException) => new IllegalStateException(
          s"$where: the table does not exist in the region of kinesis.region (or at kinesis.dynamodb.endpointUrl). " +
            s"${said(ex)}",
          ErrorText.safeCause(ex, secrets))
      case (_, ex: AwsServiceException) if SdkErrors.RejectedCredentialCodes.contains(code(ex)) =>
        // No cause: the SDK's messages of signature errors (HTTP 400) echo the signed request, token included.
        new IllegalStateException(s"$where was refused (${code(ex)}, HTTP ${ex.statusCode}): the credentials were " +
          s"rejected (wrong, expired, or not valid for this endpoint and region). " +
          s"${CredentialsProviders.origin(settings)} ${said(ex)}")
      case (_, ex: AwsServiceException) if ex.statusCode == 403 || code(ex).contains("AccessDenied") =>
        // No cause: the SDK's messages of signature errors can echo the signed request.
        new IllegalStateException(s"$where was refused (${code(ex)}, HTTP ${ex.statusCode}): the credentials need " +
          s"dynamodb:$operation on the table (the store uses DescribeTable, CreateTable, GetItem, PutItem, " +
          s"BatchGetItem, Query and BatchWriteItem). ${CredentialsProviders.origin(settings)} ${said(ex)}")
      case (_, ex: AwsServiceException) => new IllegalStateException(
          s"$where failed (${code(ex)}, HTTP " +
            s"${ex.statusCode}). ${said(ex)}",
          ErrorText.safeCause(ex, secrets))
      case (_, other) => new IllegalStateException(
          s"$where failed: ${scrub(String.valueOf(other.getMessage))}",
          ErrorText.safeCause(other, secrets))
    }
  }

  private def code(ex: AwsServiceException): String =
    Option(ex.awsErrorDetails).flatMap(d => Option(d.errorCode)).getOrElse(ex.getClass.getSimpleName)

  private def said(ex: AwsServiceException): String = {
    val text = Option(ex.awsErrorDetails).flatMap(d => Option(d.errorMessage)).getOrElse(String.valueOf(ex.getMessage))
    s"DynamoDB said: ${scrub(firstLine(text))} (request id ${ex.requestId})"
  }

  private def firstLine(text: String): String = text.linesIterator.find(_.trim.nonEmpty).getOrElse("").trim

  private def scrub(text: String): String = ErrorText.scrub(text, secrets)
}
