package io.github.sparkkinesis.sink

import java.nio.ByteBuffer

import io.github.sparkkinesis.compat.JavaCollections._

import com.google.common.util.concurrent.{FutureCallback, Futures, MoreExecutors}
import software.amazon.kinesis.producer.{
  KinesisProducer,
  KinesisProducerConfiguration,
  UserRecordFailedException,
  UserRecordResult
}

import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider

import io.github.sparkkinesis.client.{ClientSettings, CredentialsProviders, ErrorText, SdkErrors, SdkKinesisClient}

/**
 * The settings that make two producers interchangeable; one [[KplProducer]] per distinct value per executor.
 *
 * @param maxPendingRecords
 *   most records the executor's tasks may have handed to this producer unconfirmed
 * @param maxPendingBytes
 *   most bytes (partition keys and data) of those records
 * @param strictKeyOrder
 *   whether a record waits until every earlier record of its stream and partition key is confirmed
 * @param putRecords
 *   whether rows go out in the connector's own PutRecords calls ([[PutRecordsProducer]]) instead of through the KPL
 */
private[sink] final case class ProducerSettings(
    client: ClientSettings,
    recordMaxBufferedTimeMs: Long,
    maxConnections: Int,
    aggregationEnabled: Boolean,
    recordTtlMs: Long,
    maxPendingRecords: Int,
    maxPendingBytes: Long,
    strictKeyOrder: Boolean = false,
    putRecords: Boolean = false)

/** [[RecordProducer]] on the Kinesis Producer Library's native daemon (one child process per instance). */
private[sink] final class KplProducer(settings: ProducerSettings) extends StoppableProducer {

  // Built here, not inside the configuration, so that destroy() can close it (an assumed role's refresh thread).
  private val credentials = CredentialsProviders.of(settings.client)
  private val kpl = new KinesisProducer(KplProducer.configuration(settings, credentials))
  private val failures = new KplFailures(settings)

  override def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit = {
    val future =
      kpl.addUserRecord(record.stream, record.partitionKey, record.explicitHashKey.orNull, ByteBuffer.wrap(record.data))
    val stream = record.stream // the callback keeps the name only, not the row's data
    Futures.addCallback(
      future,
      new FutureCallback[UserRecordResult] {
        override def onSuccess(result: UserRecordResult): Unit =
          onDone(if (result.isSuccessful) SendResult.Written(result.getAttempts.size)
          else SendResult.Failed(failures.describe(stream, result)))

        override def onFailure(t: Throwable): Unit = onDone(SendResult.Failed(t match {
          case failed: UserRecordFailedException => failures.describe(stream, failed.getResult)
          case other => failures.describeCrash(stream, other)
        }))
      },
      MoreExecutors.directExecutor())
  }

  override def outstandingRecords: Long = kpl.getOutstandingRecordsCount

  /** Ends the native daemon; records not yet written are dropped, so callers wait for their records first. */
  override def destroy(): Unit = {
    kpl.destroy()
    credentials match {
      case closeable: AutoCloseable => closeable.close()
      case _ =>
    }
  }
}

private[sink] object KplProducer {

  /**
   * The longest record TTL handed to the KPL, about 24.8 days: its native daemon adds the TTL to its clock, which
   * overflows for larger values (its documented maximum, Long.MaxValue, among them) and expires every record at once
   * (awslabs/amazon-kinesis-producer#54). Longer TTLs mean "keep trying", so they are read as this one.
   */
  val MaxRecordTtlMs: Long = Int.MaxValue.toLong

  /** The TTL the KPL is given for option kinesis.sink.recordTtl `ms`. */
  def recordTtlForKpl(ms: Long): Long = math.min(ms, MaxRecordTtlMs)

  /** The KPL configuration for `settings`: endpoint, region and `credentials` (built as the source's are). */
  def configuration(settings: ProducerSettings, credentials: AwsCredentialsProvider): KinesisProducerConfiguration = {
    val client = settings.client
    val config = new KinesisProducerConfiguration()
      .setRegion(SdkKinesisClient.region(client).id)
      .setCredentialsProvider(credentials)
      .setRecordMaxBufferedTime(settings.recordMaxBufferedTimeMs)
      .setMaxConnections(settings.maxConnections.toLong)
      .setAggregationEnabled(settings.aggregationEnabled)
      .setRecordTtl(recordTtlForKpl(settings.recordTtlMs))
      .setVerifyCertificate(client.verifyCertificate)
      // CloudWatch metrics would need cloudwatch:PutMetricData and an endpoint of their own; Spark has its metrics.
      .setMetricsLevel("none")
      // The daemon warns about every EC2 metadata probe it makes off EC2; failures reach users through the tasks.
      .setLogLevel("error")
    client.endpointUrl.foreach { endpoint =>
      config.setKinesisEndpoint(endpoint.getHost)
      config.setKinesisPort(if (endpoint.getPort > 0) endpoint.getPort.toLong else 443L)
    }
    config
  }
}

/** Turns the KPL's failure reports into messages that name the stream and say what to do, without secrets. */
private[sink] final class KplFailures(settings: ProducerSettings) {
  private val secrets = CredentialsProviders.secrets(settings.client)

  def describe(stream: String, result: UserRecordResult): String = {
    val attempts = result.getAttempts.asScala.toVector
    val errors = attempts.filterNot(_.isSuccessful).map(a => s"${a.getErrorCode}: ${scrub(a.getErrorMessage)}")
    val codes = attempts.map(_.getErrorCode).toSet
    val lastReal = attempts.reverse.find(a => !a.isSuccessful && a.getErrorCode != "Expired")
      .map(a => s" The last error was ${a.getErrorCode}: ${scrub(a.getErrorMessage)}.").getOrElse("")
    val why =
      if (codes.contains("ResourceNotFoundException")) {
        "the stream does not exist: create it, or correct option kinesis.streamName (or the row's streamName " +
          "column), kinesis.region and kinesis.endpointUrl."
      } else if (codes.exists(KplFailures.AccessCodes)) {
        "Kinesis refused the credentials, or they lack kinesis:PutRecords and kinesis:ListShards on the stream. " +
          CredentialsProviders.origin(settings.client)
      } else if (codes.contains("Expired")) {
        s"it was not written within kinesis.sink.recordTtl (${settings.recordTtlMs} ms): Kinesis was unreachable, " +
          "throttled or failing for that long. Raise kinesis.sink.recordTtl to ride out longer outages."
      } else {
        "Kinesis rejected it."
      }
    s"Could not write a row to Kinesis stream '$stream' after ${attempts.size} attempt(s): $why$lastReal " +
      s"Errors: ${errors.distinct.take(5).mkString("; ")}. The task fails and Spark retries it; rows it had " +
      "already written may be written twice (the sink delivers at least once)."
  }

  def describeCrash(stream: String, t: Throwable): String =
    s"Could not write a row to Kinesis stream '$stream': the Kinesis Producer Library's native process failed " +
      s"(${t.getClass.getSimpleName}: ${scrub(String.valueOf(t.getMessage))}). The task fails and Spark retries " +
      "it with a new producer; rows it had already written may be written twice."

  private def scrub(text: String): String = ErrorText.scrub(text, secrets)
}

private object KplFailures {
  private val AccessCodes =
    SdkErrors.RejectedCredentialCodes ++ Set("AccessDeniedException", "KMSAccessDeniedException")
}
