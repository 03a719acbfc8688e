package io.github.sparkkinesis.client

import java.util.Locale

import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.model.{
  ExpiredIteratorException => SdkExpiredIteratorException,
  InvalidArgumentException,
  KmsAccessDeniedException,
  KmsThrottlingException,
  LimitExceededException,
  ProvisionedThroughputExceededException,
  ResourceInUseException,
  ResourceNotFoundException
}

/**
 * Translates the SDK's exceptions into the connector's [[KinesisClientException]] family, with messages that name the
 * stream (and shard), say which option to check, and never contain `secrets`.
 *
 * @param origin
 *   where the credentials came from, a sentence naming the options, so access errors can say it
 * @param secrets
 *   values (secret key, session token) scrubbed from any text copied out of the SDK
 * @param endpoint
 *   the endpoint the client calls, in words, so a failure to reach it can name it
 */
private[client] final class SdkErrors(
    origin: String,
    secrets: Seq[String],
    endpoint: String = "the AWS endpoint") {
  import SdkErrors._

  /** The connector exception for `e`, raised by `operation` (e.g. "GetRecords") on the stream and shard given. */
  def translate(
      e: Throwable,
      operation: String,
      streamName: String,
      shardId: Option[String]): KinesisClientException = {
    val where = shardId.fold(s"stream '$streamName'")(id => s"shard '$id' of stream '$streamName'")
    e match {
      case ex if credentialsFailure(ex).isDefined =>
        // No cause: the chain holds the SDK's exceptions, whose messages can echo the signed request.
        new AccessException(s"No credentials for $operation on $where: ${scrub(credentialsFailure(ex).get.getMessage)}")
      case ex: SdkExpiredIteratorException =>
        new ExpiredIteratorException(
          s"The shard iterator used by $operation on $where has expired (iterators live five minutes): " +
            s"request a new iterator from the last sequence number read. ${details(ex)}",
          cause(ex))
      case ex: ResourceInUseException if operation == "SubscribeToShard" =>
        new SubscriptionBusyException(
          s"Kinesis refused $operation on $where for now: a subscription of the same consumer to this shard is still " +
            s"open, or the last one began less than a few seconds ago. ${details(ex)}",
          cause(ex))
      case ex: AwsServiceException if isThrottling(ex) =>
        new ThrottledException(
          s"Kinesis cannot serve $operation on $where right now (${code(ex)}, HTTP ${ex.statusCode}): back off and " +
            s"retry; if this persists, the stream needs more shards or fewer readers. ${details(ex)}",
          cause(ex))
      case ex: InvalidArgumentException
          if (operation == "GetShardIterator" || operation == "SubscribeToShard") &&
            mentionsFuture(ex) =>
        new TimestampInFutureException(
          s"$operation on $where: the AT_TIMESTAMP position lies in the future for Kinesis. ${details(ex)}",
          cause(ex))
      case ex: ResourceNotFoundException =>
        new ResourceMissingException(
          s"$operation: Kinesis reports that $where${shardId.fold("")(_ => ", or the position asked for in it,")} " +
            "does not exist. Check options kinesis.streamName, kinesis.region and kinesis.endpointUrl: the stream " +
            "must exist in that region and account" +
            shardId.fold("")(_ => "; shards and records also disappear once older than the stream's retention period") +
            (if (FanOutOperations.contains(operation)) "; or the stream consumer named by option kinesis.consumerArn " +
               "or kinesis.consumerName was deregistered"
             else "") +
            s". ${details(ex)}",
          cause(ex))
      case ex: AwsServiceException if isAccessProblem(ex) =>
        // No cause: the messages of signature errors can echo the signed request, session token included.
        new AccessException(
          s"Kinesis refused $operation on $where (${code(ex)}, HTTP ${ex.statusCode}): " +
            s"${accessAdvice(ex, operation)} " +
            s"$origin Kinesis said: ${scrub(firstLine(message(ex)))} (request id ${ex.requestId})")
      case ex if unreachable(ex).isDefined =>
        new UnreachableException(
          s"Cannot reach Kinesis at $endpoint for $operation on $where: ${unreachable(ex).get}. Check option " +
            "kinesis.endpointUrl (unset means the AWS endpoint of kinesis.region) and that the driver and executors " +
            s"can reach it (DNS, proxy, VPC endpoint, security groups). SDK said: ${scrub(firstLine(
                String.valueOf(ex.getMessage)))}",
          cause(ex))
      case ex: SdkClientException if mentionsCredentials(ex) =>
        new AccessException(
          s"No AWS credentials for $operation on $where: set options kinesis.awsAccessKeyId and " +
            "kinesis.awsSecretKey (or kinesis.credentialProviderClass), or provide credentials through the AWS " +
            "default credentials chain (environment variables, system properties, ~/.aws profile, web identity, " +
            s"container or instance role). $origin " +
            s"SDK said: ${scrub(firstLine(ex.getMessage))}",
          cause(ex))
      case ex: AwsServiceException =>
        new RequestRefusedException(
          s"Kinesis $operation on $where failed (${code(ex)}, HTTP ${ex.statusCode}): ${scrub(message(ex))} " +
            s"(request id ${ex.requestId})",
          cause(ex))
      case ex =>
        new KinesisClientException(
          s"Kinesis $operation on $where failed: ${scrub(String.valueOf(ex.getMessage))}",
          cause(ex))
    }
  }

  private def accessAdvice(ex: AwsServiceException, operation: String): String =
    if (ex.isInstanceOf[KmsAccessDeniedException]) {
      "the stream is encrypted and the credentials lack kms:Decrypt on its KMS key."
    } else if (RejectedCredentialCodes.contains(code(ex))) {
      "the credentials were rejected (wrong, expired, or not valid for this endpoint and region)."
    } else if (FanOutOperations.contains(operation)) {
      s"the credentials lack the IAM permission kinesis:$operation, which option kinesis.consumerType=" +
        "SubscribeToShard (enhanced fan-out) needs on the stream and its consumer (kinesis.consumerName or " +
        "kinesis.consumerArn); grant it, or set kinesis.consumerType=GetRecords to poll instead."
    } else {
      s"the credentials lack the IAM permission kinesis:$operation on this stream."
    }

  private def details(ex: Throwable): String = ex match {
    case s: AwsServiceException => s"Kinesis said: ${scrub(message(s))} (request id ${s.requestId})"
    case other => s"SDK said: ${scrub(String.valueOf(other.getMessage))}"
  }

  private def scrub(text: String): String = ErrorText.scrub(text, secrets)

  /** `ex` as a cause, unless its messages hold a secret or a signed request: then a scrubbed copy. */
  private def cause(ex: Throwable): Throwable = ErrorText.safeCause(ex, secrets)
}

private[sparkkinesis] object SdkErrors {

  /** The translator for a client built from `settings`. */
  def of(settings: ClientSettings): SdkErrors =
    new SdkErrors(CredentialsProviders.origin(settings), CredentialsProviders.secrets(settings), endpointOf(settings))

  /** The endpoint a client of `settings` calls, as messages name it. */
  def endpointOf(settings: ClientSettings): String = settings.endpointUrl.map(u =>
    s"${ErrorText.endpoint(u)} (option kinesis.endpointUrl)")
    .getOrElse(settings.region.fold("the AWS endpoint of the default region chain's region")(r =>
      s"https://kinesis.$r.amazonaws.com (the AWS endpoint of option kinesis.region)"))

  /**
   * Why nothing answered, when that is the failure: a host name that does not resolve, a refused connection, no route
   * to the host. Timeouts are not among them: a slow network may pass.
   */
  private[sparkkinesis] def unreachable(e: Throwable): Option[String] =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).collectFirst {
      case u: java.net.UnknownHostException => s"the host name does not resolve (${u.getMessage})"
      case _: java.net.ConnectException => "the connection was refused (nothing listens there)"
      case _: java.net.NoRouteToHostException => "there is no route to the host"
    }

  /** A failure to obtain credentials, anywhere among the causes (the SDK wraps what providers throw). */
  private def credentialsFailure(e: Throwable): Option[CredentialsUnavailable] =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).collectFirst { case c: CredentialsUnavailable => c }

  /** Error codes meaning the credentials themselves were not accepted, as opposed to lacking a permission. */
  private[sparkkinesis] val RejectedCredentialCodes = Set(
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "IncompleteSignature",
    "IncompleteSignatureException",
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidClientTokenId",
    "MissingAuthenticationToken",
    "MissingAuthenticationTokenException",
    "SignatureDoesNotMatch",
    "InvalidAccessKeyId",
    "RequestExpired")

  /** The calls of enhanced fan-out, each needing its own IAM permission of the same name. */
  private val FanOutOperations = Set(
    "SubscribeToShard",
    "RegisterStreamConsumer",
    "DescribeStreamConsumer",
    "DeregisterStreamConsumer",
    "DescribeStreamSummary")

  private val AccessCodes = RejectedCredentialCodes ++ Set("AccessDeniedException", "AccessDenied")

  private def errorCode(ex: AwsServiceException): Option[String] =
    Option(ex.awsErrorDetails).flatMap(d => Option(d.errorCode)).filter(_.nonEmpty)

  private def code(ex: AwsServiceException): String = errorCode(ex).getOrElse(ex.getClass.getSimpleName)

  private def message(ex: AwsServiceException): String =
    Option(ex.awsErrorDetails).flatMap(d => Option(d.errorMessage)).getOrElse(String.valueOf(ex.getMessage))

  private def firstLine(text: String): String = text.linesIterator.find(_.trim.nonEmpty).getOrElse("").trim

  private def isAccessProblem(ex: AwsServiceException): Boolean =
    ex.statusCode == 403 || ex.isInstanceOf[KmsAccessDeniedException] || AccessCodes.contains(code(ex))

  /**
   * Throttling, plus server-side failures, which are just as transient. A 500 without an error code is not counted: AWS
   * labels its own (InternalFailure), while kinesis-mock answers a malformed iterator with a bare 500 (AWS: 400
   * InvalidArgumentException), which must not be retried forever.
   */
  private def isThrottling(ex: AwsServiceException): Boolean =
    ex.isInstanceOf[ProvisionedThroughputExceededException] || ex.isInstanceOf[LimitExceededException] ||
      ex.isInstanceOf[KmsThrottlingException] || ex.isThrottlingException || (ex.statusCode match {
        case 502 | 503 | 504 => true
        case status => status >= 500 && errorCode(ex).isDefined
      })

  /**
   * The refusal of an AT_TIMESTAMP iterator whose timestamp is ahead of the service's clock, as AWS words it ("The
   * timestampInMillis parameter cannot be greater than the currentTimestampInMillis ...") and as kinesis-mock does
   * ("... in the future").
   */
  private def mentionsFuture(ex: AwsServiceException): Boolean = {
    val text = message(ex).toLowerCase(Locale.ROOT)
    text.contains("currenttimestampinmillis") || text.contains("future")
  }

  private def mentionsCredentials(ex: SdkClientException): Boolean =
    String.valueOf(ex.getMessage).toLowerCase(Locale.ROOT).contains("credentials")
}
