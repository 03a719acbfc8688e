package io.github.sparkkinesis.client

import java.util.concurrent.{Executors, ThreadFactory, TimeUnit}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

/** Runs a JVM-wide cache's sweep for idle resources once a minute, on a daemon thread of its own. */
private[sparkkinesis] object IdleSweeper {
  private val log = LoggerFactory.getLogger(getClass)

  /** How long a shared client or producer may stay unused before it is closed. */
  val IdleMs: Long = TimeUnit.MINUTES.toMillis(10)

  /** Starts calling `sweep` every minute; a failing sweep is logged and the next one runs as planned. */
  def start(name: String)(sweep: () => Unit): Unit = {
    val executor = Executors.newSingleThreadScheduledExecutor(new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, name)
        t.setDaemon(true)
        t
      }
    })
    executor.scheduleWithFixedDelay(
      new Runnable {
        override def run(): Unit =
          try sweep()
          catch {
            case NonFatal(e) => log.warn(s"$name: closing idle resources failed: $e")
          }
      },
      1,
      1,
      TimeUnit.MINUTES)
  }
}
