package io.github.sparkkinesis.sink

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

/**
 * One [[KplProducer]] per distinct [[ProducerSettings]] in this JVM, shared by every write task of the executor:
 * the KPL's daemon, its connections and its aggregation buffers outlive single tasks. The daemons end when the
 * JVM does (a shutdown hook destroys them) or when a producer is discarded after failing. Nothing is lost by not
 * flushing at shutdown: a task commits only once all its records are confirmed, so a record still buffered
 * belongs to a task that did not commit and that Spark runs again.
 */
private[sink] object SharedProducers {
  private val log = LoggerFactory.getLogger(getClass)
  private val producers = new ConcurrentHashMap[ProducerSettings, KplProducer]()

  Runtime.getRuntime.addShutdownHook(new Thread("spark-kinesis-producers-shutdown") {
    override def run(): Unit = producers.values().forEach(p => shutDown(p))
  })

  def apply(settings: ProducerSettings): KplProducer =
    producers.computeIfAbsent(settings, new java.util.function.Function[ProducerSettings, KplProducer] {
      override def apply(s: ProducerSettings): KplProducer = new KplProducer(s)
    })

  /** Drops `producer` (its daemon failed), so the next task of these settings starts a new one. */
  def discard(settings: ProducerSettings, producer: KplProducer): Unit =
    if (producers.remove(settings, producer)) shutDown(producer)

  private def shutDown(producer: KplProducer): Unit =
    try producer.destroy()
    catch {
      case NonFatal(e) => log.warn(s"Could not stop a Kinesis producer cleanly: $e")
    }
}
