package io.github.sparkkinesis.client

import io.github.sparkkinesis.compat.JavaCollections._

import software.amazon.awssdk.core.metrics.CoreMetric
import software.amazon.awssdk.metrics.{MetricCollection, MetricPublisher}

/**
 * A metric publisher for one request, which keeps how long the call went on after Kinesis answered: its last attempt's
 * UnmarshallingDuration, from the answer's headers to the parsed response, which for a synchronous client is the
 * transfer of the body and its parsing. 0 until the SDK publishes the call's metrics, which a synchronous call does
 * before it returns.
 */
private[client] final class AnswerTail extends MetricPublisher {
  @volatile private var lastMs = 0L

  /** How long the call went on after the answer's headers came, in ms. */
  def ms: Long = lastMs

  override def publish(metrics: MetricCollection): Unit = {
    val attempts = metrics.children.asScala.toSeq.filter(_.name == "ApiCallAttempt")
    val tails = attempts.flatMap(_.metricValues(CoreMetric.UNMARSHALLING_DURATION).asScala.headOption)
    tails.lastOption.foreach(tail => lastMs = tail.toMillis)
  }

  override def close(): Unit = ()
}
