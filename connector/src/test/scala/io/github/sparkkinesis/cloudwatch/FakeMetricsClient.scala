package io.github.sparkkinesis.cloudwatch

import java.util.concurrent.{AbstractExecutorService, TimeUnit}

import scala.collection.mutable

/**
 * A CloudWatch that records each PutMetricData call (namespace, data) it takes, and fails the calls tests ask it to:
 * `failing` is thrown by every call while set.
 */
final class FakeMetricsClient extends MetricsClient {
  val calls: mutable.Buffer[(String, Seq[Datum])] = mutable.Buffer.empty
  var attempts = 0
  var failing: Option[Throwable] = None
  var closed = false

  override def put(namespace: String, data: Seq[Datum]): Unit = {
    attempts += 1
    failing.foreach(e => throw e)
    calls += namespace -> data
  }

  override def close(): Unit = closed = true
}

/** Runs each task at once on the caller's thread, so a test sees a call's effects as soon as it was asked for. */
final class DirectExecutor extends AbstractExecutorService {
  private var down = false
  override def execute(task: Runnable): Unit = task.run()
  override def shutdown(): Unit = down = true
  override def shutdownNow(): java.util.List[Runnable] = { down = true; java.util.Collections.emptyList() }
  override def isShutdown: Boolean = down
  override def isTerminated: Boolean = down
  override def awaitTermination(timeout: Long, unit: TimeUnit): Boolean = true
}
