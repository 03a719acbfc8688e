package io.github.sparkkinesis.client

import java.util.concurrent.ConcurrentHashMap

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * One client per distinct [[ClientSettings]], opened with `open` on first use and closed after `idleMs` without calls
 * (see [[IdleClosingClient]]). Keys are the settings, never resolved credentials, so temporary credentials that rotate
 * (an assumed role, a provider class) keep one client. [[sweep]] closes the idle ones and forgets them, so settings
 * that change (credentials given as options, rotated by the user between restarts) leave nothing behind; a holder that
 * calls a forgotten client again reopens it, and it is swept again like any other.
 */
private[client] final class ClientCache(open: ClientSettings => KinesisClient, idleMs: Long, clock: () => Long) {
  private val clients = new ConcurrentHashMap[ClientSettings, IdleClosingClient]()

  /** Forgotten clients a holder opened again: not handed out any more, but still to be closed when idle. */
  private val reopened = ConcurrentHashMap.newKeySet[IdleClosingClient]()

  def apply(settings: ClientSettings): KinesisClient =
    clients.computeIfAbsent(
      settings,
      new java.util.function.Function[ClientSettings, IdleClosingClient] {
        override def apply(s: ClientSettings): IdleClosingClient =
          new IdleClosingClient(() => open(s), idleMs, clock, c => if (!clients.containsValue(c)) reopened.add(c))
      })

  /** Closes and forgets the clients unused for `idleMs`; returns how many. */
  def sweep(): Int = (clients.values.asScala ++ reopened.asScala).toVector.distinct.count { client =>
    client.retireIfIdle { () =>
      clients.values.remove(client)
      reopened.remove(client)
    }
  }

  /** How many clients are held: handed out, or forgotten but open again. */
  def size: Int = clients.size + reopened.size
}

/**
 * This JVM's [[ClientCache]] of [[SdkKinesisClient]]s, shared by every task and query, so that connections and threads
 * are reused across micro-batches instead of being set up per task. A daemon thread closes clients idle for 10 minutes
 * (a query stopped, or credentials options changed on restart); a later call opens a new one.
 */
object SharedClients extends (ClientSettings => KinesisClient) with Serializable {

  @transient private lazy val cache = {
    val cache = new ClientCache(new SdkKinesisClient(_), IdleSweeper.IdleMs, () => System.currentTimeMillis())
    IdleSweeper.start("spark-kinesis-idle-clients")(() => cache.sweep())
    cache
  }

  override def apply(settings: ClientSettings): KinesisClient = cache(settings)

  private def readResolve(): AnyRef = SharedClients
}
