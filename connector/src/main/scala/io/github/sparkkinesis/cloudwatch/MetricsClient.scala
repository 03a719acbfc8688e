package io.github.sparkkinesis.cloudwatch

import java.time.{Duration, Instant}

import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.cloudwatch.CloudWatchClient
import software.amazon.awssdk.services.cloudwatch.model.{
  Dimension,
  MetricDatum,
  PutMetricDataRequest,
  StandardUnit,
  StatisticSet
}

import io.github.sparkkinesis.client.{ClientSettings, CredentialsProviders, SdkKinesisClient}
import io.github.sparkkinesis.compat.JavaCollections._
import io.github.sparkkinesis.options.CloudWatchSettings

/** A metric's values over the batches of a minute: how many, their sum, the least and the greatest. */
final case class Stats(count: Int, sum: Double, min: Double, max: Double) {
  def +(value: Double): Stats = Stats(count + 1, sum + value, math.min(min, value), math.max(max, value))
}

object Stats {
  def of(value: Double): Stats = Stats(1, value, value, value)
}

/** One metric of one stream as PutMetricData takes it; `unit` is a CloudWatch unit name such as `Milliseconds`. */
final case class Datum(name: String, unit: String, stats: Stats, dimensions: Seq[(String, String)], timestampMs: Long)

/** The one CloudWatch call the publisher makes; the SDK's client behind it ([[SdkMetricsClient]]), a fake in tests. */
trait MetricsClient extends AutoCloseable {

  /** Publishes `data` under `namespace` in one PutMetricData call; fails with [[PublishDenied]] when not allowed. */
  def put(namespace: String, data: Seq[Datum]): Unit
}

/** CloudWatch refused the call for want of permission (HTTP 403, AccessDenied). */
final class PublishDenied(message: String) extends RuntimeException(message)

/**
 * PutMetricData through the AWS SDK, with the query's Kinesis credentials, retries and HTTP client, in
 * `kinesis.cloudwatch.region` (else the stream's region) at `kinesis.cloudwatch.endpointUrl` (else the regional one). A
 * call gives up after [[SdkMetricsClient.CallTimeout]], so calls never queue up behind one another.
 */
final class SdkMetricsClient(settings: ClientSettings, cloudWatch: CloudWatchSettings) extends MetricsClient {
  private val credentials = CredentialsProviders.of(settings)

  private val client = {
    val builder = CloudWatchClient.builder()
      .region(cloudWatch.region.map(Region.of).getOrElse(SdkKinesisClient.region(settings)))
      .credentialsProvider(credentials)
      .overrideConfiguration(ClientOverrideConfiguration.builder()
        .retryStrategy(SdkKinesisClient.retryStrategy(settings.retry))
        .apiCallTimeout(SdkMetricsClient.CallTimeout).build())
      // Named, not discovered: the SDK's ServiceLoader discovery of HTTP clients breaks in the relocated JAR.
      .httpClientBuilder(ApacheHttpClient.builder())
    cloudWatch.endpoint.foreach(builder.endpointOverride)
    builder.build()
  }

  override def put(namespace: String, data: Seq[Datum]): Unit = {
    val request = PutMetricDataRequest.builder().namespace(namespace).metricData(data.map(toSdk).asJava).build()
    try client.putMetricData(request)
    catch {
      case e: AwsServiceException if e.statusCode == 403 || SdkMetricsClient.DeniedCodes(errorCode(e)) =>
        throw new PublishDenied(s"${errorCode(e)}: ${Option(e.awsErrorDetails).map(_.errorMessage).orNull}")
    }
  }

  private def errorCode(e: AwsServiceException): String =
    Option(e.awsErrorDetails).flatMap(d => Option(d.errorCode)).getOrElse(s"HTTP ${e.statusCode}")

  private def toSdk(d: Datum): MetricDatum = MetricDatum.builder()
    .metricName(d.name)
    .unit(StandardUnit.fromValue(d.unit))
    .statisticValues(StatisticSet.builder()
      .sampleCount(d.stats.count.toDouble).sum(d.stats.sum).minimum(d.stats.min).maximum(d.stats.max).build())
    .dimensions(d.dimensions.map { case (name, value) => Dimension.builder().name(name).value(value).build() }.asJava)
    .timestamp(Instant.ofEpochMilli(d.timestampMs))
    .build()

  override def close(): Unit = {
    client.close()
    credentials match {
      case closeable: AutoCloseable => closeable.close()
      case _ =>
    }
  }
}

object SdkMetricsClient {

  /** Longest a PutMetricData may take, retries included: well under the minute between a stream's calls. */
  val CallTimeout: Duration = Duration.ofSeconds(30)

  private val DeniedCodes = Set("AccessDenied", "AccessDeniedException", "NotAuthorized", "UnauthorizedOperation")
}
