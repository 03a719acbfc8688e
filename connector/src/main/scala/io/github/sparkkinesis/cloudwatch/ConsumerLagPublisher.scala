package io.github.sparkkinesis.cloudwatch

import java.util.concurrent.{ExecutorService, Executors, ThreadFactory}

import scala.collection.mutable
import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{CredentialsProviders, ErrorText, StreamRef}
import io.github.sparkkinesis.options.{CloudWatchSettings, KinesisSourceOptions}
import io.github.sparkkinesis.source.SourceMetrics
import io.github.sparkkinesis.source.reading.TaskMetrics

/**
 * Publishes each stream's consumer lag and reads to CloudWatch from the driver (`kinesis.emitConsumerLagMetrics`). Each
 * batch's metrics, as [[SourceMetrics.ofBatch]] computed them, are added to its streams' pending statistics; a stream's
 * pending statistics go out together in one PutMetricData once a minute has passed since its last one, so a stream
 * costs at most one call per minute, and a minute without batches none. Calls run on a thread of their own, so the
 * query never waits on CloudWatch; a failed call is logged (at most once a minute; a missing permission once, saying
 * what to grant) and never fails the query. Used from the query's thread.
 *
 * @param streams
 *   the streams read, by name or ARN
 * @param placeholders
 *   the values of `{app}` and `{queryId}` in dimension values, asked for at the first batch (the query's thread knows
 *   them)
 * @param secrets
 *   what no warning may show ([[CredentialsProviders.secrets]])
 * @param credentialsOrigin
 *   where the credentials come from, in words naming the options, for the missing-permission warning
 */
final class ConsumerLagPublisher(
    settings: CloudWatchSettings,
    streams: Seq[String],
    openClient: () => MetricsClient,
    placeholders: () => Map[String, String],
    secrets: Seq[String],
    credentialsOrigin: String,
    clock: () => Long,
    calls: ExecutorService,
    warn: String => Unit) {
  import ConsumerLagPublisher._

  private val names = streams.map(StreamRef.nameOf)
  private val pending = mutable.Map.empty[String, Map[String, Stats]]
  private val lastSent = mutable.Map.empty[String, Long]
  private var lastBatch: Option[Long] = None
  private lazy val context = placeholders()
  private var stopped = false

  // Touched by the calls' thread only.
  private var client: Option[MetricsClient] = None
  private var deniedWarned = false
  private var lastWarnedMs: Option[Long] = None
  private var unwarned = 0

  /**
   * Adds the statistics of batch `batch` (its `metrics`, [[SourceMetrics.ofBatch]]) and publishes the streams whose
   * minute is up. Spark reports the latest batch again after triggers that ran none: a batch is counted once.
   */
  def afterBatch(batch: Long, metrics: Map[String, String]): Unit = synchronized {
    if (!stopped && !lastBatch.contains(batch)) {
      lastBatch = Some(batch)
      val now = clock()
      names.foreach { stream =>
        val samples = Published.flatMap { m =>
          metrics.get(s"${SourceMetrics.StreamPrefix}$stream.${m.source}").flatMap(v => Try(v.toDouble).toOption)
            .map(m.name -> _)
        }
        val stats = samples.foldLeft(pending.getOrElse(stream, Map.empty[String, Stats])) { case (acc, (name, v)) =>
          acc.updated(name, acc.get(name).fold(Stats.of(v))(_ + v))
        }
        pending(stream) = stats
        if (stats.nonEmpty && lastSent.get(stream).forall(now - _ >= IntervalMs)) {
          pending -= stream
          lastSent(stream) = now
          val data = Published.flatMap(m => stats.get(m.name).map(Datum(m.name, m.unit, _, dimensionsOf(stream), now)))
          calls.execute(new Runnable { override def run(): Unit = publish(stream, data) })
        }
      }
    }
  }

  /** Stops publishing: pending statistics younger than their minute are dropped; the client closes after its calls. */
  def stop(): Unit = synchronized {
    if (!stopped) {
      stopped = true
      calls.execute(new Runnable { override def run(): Unit = client.foreach(c => Try(c.close())) })
      calls.shutdown()
    }
  }

  private def dimensionsOf(stream: String): Seq[(String, String)] = {
    // A placeholder Spark could not fill says so rather than leaving its braces or an empty value (which CloudWatch
    // refuses).
    val values = CloudWatchSettings.Placeholders.map(p => p -> "unknown").toMap ++ context + ("{stream}" -> stream)
    settings.dimensions.map { case (name, template) =>
      name -> values.foldLeft(template) { case (text, (placeholder, value)) => text.replace(placeholder, value) }
    }
  }

  private def publish(stream: String, data: Seq[Datum]): Unit =
    try {
      val c = client.getOrElse(openClient())
      client = Some(c)
      c.put(settings.namespace, data)
    } catch {
      case e: PublishDenied if !deniedWarned =>
        deniedWarned = true
        warn(s"CloudWatch refused to take stream '$stream''s consumer lag (${scrub(e.getMessage)}): the query's " +
          s"identity needs permission cloudwatch:PutMetricData (namespace '${settings.namespace}'). Grant it in an " +
          "IAM policy (Action cloudwatch:PutMetricData, Resource *; a condition on cloudwatch:namespace may narrow " +
          s"it), or set kinesis.emitConsumerLagMetrics to false. $credentialsOrigin The query goes on; publication " +
          "is tried again each minute, and this warning is not repeated.")
      case _: PublishDenied =>
      case NonFatal(e) => warnThrottled(stream, e)
    }

  private def warnThrottled(stream: String, e: Throwable): Unit = {
    val now = clock()
    if (lastWarnedMs.forall(now - _ >= IntervalMs)) {
      val more = if (unwarned > 0) s" ($unwarned more failed since the last warning)" else ""
      warn(s"Publishing stream '$stream''s consumer lag to CloudWatch namespace '${settings.namespace}' failed$more: " +
        s"${scrub(e.toString)}. The query goes on; the next minute's metrics are tried again. Check " +
        "kinesis.cloudwatch.endpointUrl and kinesis.cloudwatch.region, or set kinesis.emitConsumerLagMetrics to false.")
      lastWarnedMs = Some(now)
      unwarned = 0
    } else unwarned += 1
  }

  private def scrub(text: String): String = ErrorText.scrub(text, secrets)
}

object ConsumerLagPublisher {

  /** The least time between two PutMetricData calls of one stream, and between two warnings. */
  val IntervalMs = 60000L

  /** A published metric: its CloudWatch name, the batch metric it takes its values from, and its CloudWatch unit. */
  final case class Metric(name: String, source: String, unit: String)

  /** Everything one stream's PutMetricData holds, each as statistics over the batches of its minute. */
  val Published: Seq[Metric] = Seq(
    Metric("MaxMillisBehindLatest", SourceMetrics.MaxMsBehindLatest, "Milliseconds"),
    Metric("AvgMillisBehindLatest", SourceMetrics.AvgMsBehindLatest, "Milliseconds"),
    Metric("RecordsRead", TaskMetrics.RecordsRead, "Count"),
    Metric("BytesRead", TaskMetrics.BytesRead, "Bytes"),
    Metric("GetRecordsCalls", TaskMetrics.GetRecordsCalls, "Count"),
    Metric("ThrottledCalls", TaskMetrics.ThrottledCalls, "Count"))

  private val log = LoggerFactory.getLogger(classOf[ConsumerLagPublisher])

  /** The publisher of a query with these options, when `kinesis.emitConsumerLagMetrics` is true. */
  def of(options: KinesisSourceOptions): Option[ConsumerLagPublisher] = options.cloudWatch.map { settings =>
    new ConsumerLagPublisher(
      settings,
      options.streams,
      () => new SdkMetricsClient(options.client, settings),
      () => sparkPlaceholders(),
      CredentialsProviders.secrets(options.client),
      CredentialsProviders.origin(options.client),
      () => System.currentTimeMillis(),
      Executors.newSingleThreadExecutor(new ThreadFactory {
        override def newThread(r: Runnable): Thread = {
          val thread = new Thread(r, "spark-kinesis-cloudwatch")
          thread.setDaemon(true)
          thread
        }
      }),
      message => log.warn(message))
  }

  /** `{app}` and `{queryId}` on the query's thread: Spark sets the query's id as a local property there. */
  private def sparkPlaceholders(): Map[String, String] =
    SparkSession.getActiveSession.map(_.sparkContext).fold(Map.empty[String, String]) { sc =>
      Map("{app}" -> sc.appName) ++ Option(sc.getLocalProperty("sql.streaming.queryId")).map("{queryId}" -> _)
    }
}
