package io.github.sparkkinesis.client

import java.util.concurrent.ConcurrentHashMap

/**
 * One [[SdkKinesisClient]] per distinct [[ClientSettings]] in this JVM, shared by every task and query, so
 * that connections and threads are reused across micro-batches instead of being set up per task. The
 * clients live as long as the JVM (executor) does.
 */
object SharedClients extends (ClientSettings => KinesisClient) with Serializable {
  @transient private val clients = new ConcurrentHashMap[ClientSettings, KinesisClient]()

  override def apply(settings: ClientSettings): KinesisClient =
    clients.computeIfAbsent(settings, new java.util.function.Function[ClientSettings, KinesisClient] {
      override def apply(s: ClientSettings): KinesisClient = new SdkKinesisClient(s)
    })

  private def readResolve(): AnyRef = SharedClients
}
