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
 * Turns the DynamoDB store's failures into messages that name the table, the option and the permission to grant, never
 * a secret. A failed conditional put passes through untouched: it is how the store learns it lost a race.
 */
private[metadata] final class DynamoDbErrors(table: String, settings: ClientSettings) {
  private val secrets = CredentialsProviders.secrets(settings)

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
    s"DynamoDB said: ${scrub(text.linesIterator.find(_.trim.nonEmpty).getOrElse("").trim)} (request id ${ex.requestId})"
  }

  private def scrub(text: String): String = ErrorText.scrub(text, secrets)
}
