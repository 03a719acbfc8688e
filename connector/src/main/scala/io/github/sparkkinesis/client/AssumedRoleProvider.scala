package io.github.sparkkinesis.client

import java.time.Duration

import scala.util.control.NonFatal

import software.amazon.awssdk.auth.credentials.{AwsCredentials => SdkCredentials, AwsCredentialsProvider}
import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.sts.StsClient
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider
import software.amazon.awssdk.services.sts.model.AssumeRoleRequest

/**
 * The credentials of `role`, assumed with the `base` credentials through STS in `region` (or at the role's endpoint),
 * on the SDK's [[StsAssumeRoleCredentialsProvider]]: a background refresh starts `refresh.prefetch` before the session
 * expires, and a call blocks to refresh only within `refresh.stale` of expiry, so long queries outlive any one session.
 * A failed AssumeRole surfaces as [[CredentialsUnavailable]], naming the role and options.
 */
private[client] final class AssumedRoleProvider(
    role: AssumeRoleSettings,
    base: AwsCredentialsProvider,
    region: Region,
    refresh: AssumedRoleProvider.Refresh)
    extends AwsCredentialsProvider with AutoCloseable {

  private val sts: StsClient = {
    // The HTTP client is named, not discovered: the SDK's ServiceLoader discovery breaks in the relocated JAR.
    val builder =
      StsClient.builder().region(region).credentialsProvider(base).httpClientBuilder(ApacheHttpClient.builder())
    role.stsEndpoint.foreach(builder.endpointOverride)
    builder.build()
  }

  private val provider = {
    val request = AssumeRoleRequest.builder().roleArn(role.roleArn).roleSessionName(role.sessionName)
      .durationSeconds(refresh.sessionSeconds)
    role.externalId.foreach(request.externalId)
    StsAssumeRoleCredentialsProvider.builder().stsClient(sts).refreshRequest(request.build())
      .staleTime(refresh.stale).prefetchTime(refresh.prefetch).asyncCredentialUpdateEnabled(refresh.inBackground)
      .build()
  }

  override def resolveCredentials(): SdkCredentials =
    try provider.resolveCredentials()
    catch {
      case e: AwsServiceException => throw new CredentialsUnavailable(
          s"STS refused to let the base credentials assume role ${role.roleArn} (option kinesis.stsRoleArn): " +
            s"${AssumedRoleProvider.code(e)}, HTTP ${e.statusCode}. ${AssumedRoleProvider.advice(role)} STS said: " +
            s"${AssumedRoleProvider.firstLine(e)} (request id ${e.requestId})")
      case e: SdkClientException => throw new CredentialsUnavailable(
          s"Could not assume role ${role.roleArn} (option kinesis.stsRoleArn): ${AssumedRoleProvider.firstLine(e)} " +
            s"Check kinesis.stsEndpointUrl and kinesis.region, and that base credentials are available.")
    }

  override def close(): Unit = {
    Seq[AutoCloseable](provider, sts).foreach(c =>
      try c.close()
      catch { case NonFatal(_) => })
    base match {
      case closeable: AutoCloseable => closeable.close() // the SDK does not close providers handed to it
      case _ =>
    }
  }
}

private[client] object AssumedRoleProvider {

  /**
   * How long sessions last and when they are renewed. The default: one-hour sessions (AWS's default, within every
   * role's maximum), renewed in the background from 5 minutes before expiry, blocking only in the last minute.
   */
  final case class Refresh(sessionSeconds: Int, prefetch: Duration, stale: Duration, inBackground: Boolean)

  object Refresh {
    val Default: Refresh = Refresh(3600, Duration.ofMinutes(5), Duration.ofMinutes(1), inBackground = true)
  }

  private def code(e: AwsServiceException): String =
    Option(e.awsErrorDetails).flatMap(d => Option(d.errorCode)).getOrElse(e.getClass.getSimpleName)

  private def firstLine(e: Throwable): String = {
    val text = e match {
      case s: AwsServiceException =>
        Option(s.awsErrorDetails).flatMap(d => Option(d.errorMessage)).getOrElse(s.getMessage)
      case other => other.getMessage
    }
    String.valueOf(text).linesIterator.find(_.trim.nonEmpty).getOrElse("").trim
  }

  private def advice(role: AssumeRoleSettings): String =
    "The role's trust policy must name the base identity as a principal allowed sts:AssumeRole" +
      role.externalId.fold(" (if it demands an external id, set option kinesis.stsExternalId)")(_ =>
        " with the external id of option kinesis.stsExternalId") +
      ", and the base identity needs sts:AssumeRole on the role."
}
