package io.github.sparkkinesis.it

import java.util.concurrent.{ConcurrentLinkedQueue, TimeUnit}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicReference}

import scala.collection.JavaConverters._
import scala.concurrent.duration._

/**
 * Puts records into a stream from a background thread while a test does something else (resharding, restarting, killing
 * a query): `chunkSize` records per PutRecords call, one call every `every`, payloads "<prefix>-<n>" over `keys`
 * partition keys, until [[stop]].
 */
final class BackgroundProducer(
    stream: String,
    prefix: String,
    keys: Int,
    chunkSize: Int = 20,
    every: FiniteDuration = 100.millis) {

  private val puts = new ConcurrentLinkedQueue[Put]()
  private val stopping = new AtomicBoolean(false)
  private val failure = new AtomicReference[Throwable]()
  private val thread = new Thread(
    new Runnable {
      override def run(): Unit = produce()
    },
    s"producer-$stream")
  thread.setDaemon(true)
  thread.start()
  BackgroundProducer.live.add(this)

  /** The records put so far, in put order. */
  def produced: Seq[Put] = puts.asScala.toVector

  /** Stops producing, waits (bounded) for the last call, and fails if any put failed. Returns everything put. */
  def stop(): Seq[Put] = {
    close()
    thread.join(TestStreams.OperationTimeout.toMillis)
    if (thread.isAlive)
      throw new AssertionError(s"producer for $stream did not stop within ${TestStreams.OperationTimeout}")
    Option(failure.get).foreach(e => throw new AssertionError(s"producing into $stream failed: $e", e))
    produced
  }

  /** Asks the thread to stop, without waiting or reporting: cleanup after a test that failed half-way. */
  def close(): Unit = {
    stopping.set(true)
    BackgroundProducer.live.remove(this)
  }

  private def produce(): Unit = {
    var next = 0
    try {
      while (!stopping.get) {
        val chunk = (next until next + chunkSize).map(i => (s"key-${i % keys}", s"$prefix-$i"))
        next += chunkSize
        TestStreams.putStrings(stream, chunk).foreach(p => puts.add(p))
        // Pacing, not synchronisation: a steady trickle like a real producer, sparing the two-core machine.
        TimeUnit.MILLISECONDS.sleep(every.toMillis)
      }
    } catch {
      case e: Throwable => failure.set(e)
    }
  }
}

object BackgroundProducer {
  private val live = new ConcurrentLinkedQueue[BackgroundProducer]()

  /** Closes every producer still running, so one failed test does not keep loading the emulator for the next. */
  def closeAll(): Unit = live.asScala.toVector.foreach(_.close())
}
