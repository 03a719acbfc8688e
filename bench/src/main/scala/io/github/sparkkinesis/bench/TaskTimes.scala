package io.github.sparkkinesis.bench

import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

/**
 * Counts the tasks Spark finishes while it is registered and their mean wall-clock and executor run times: the part of
 * a micro-batch spent reading shards, as opposed to scheduling and committing it.
 */
final class TaskTimes private (context: SparkContext) extends SparkListener {
  private val tasks = new AtomicLong()
  private val durationMs = new AtomicLong()
  private val runTimeMs = new AtomicLong()

  override def onTaskEnd(end: SparkListenerTaskEnd): Unit = {
    tasks.incrementAndGet()
    durationMs.addAndGet(end.taskInfo.duration)
    Option(end.taskMetrics).foreach(m => runTimeMs.addAndGet(m.executorRunTime))
  }

  /** Unregisters, and describes what was seen. */
  def stop(): String = {
    context.removeSparkListener(this)
    val n = tasks.get()
    if (n == 0) "no tasks"
    else s"$n tasks, mean ${durationMs.get() / n} ms each (executor run time ${runTimeMs.get() / n} ms)"
  }
}

object TaskTimes {
  def start(context: SparkContext): TaskTimes = {
    val listener = new TaskTimes(context)
    context.addSparkListener(listener)
    listener
  }
}
