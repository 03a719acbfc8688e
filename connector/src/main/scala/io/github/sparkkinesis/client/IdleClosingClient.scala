package io.github.sparkkinesis.client

/**
 * A [[KinesisClient]] that opens its underlying client on first use and closes it once no call has been in flight
 * for `idleMs` ([[closeIfIdle]]), opening a new one on the next call. Holders keep this object for as long as they
 * like; only the connections, threads and credential refreshes of the underlying client are given back.
 */
private[client] final class IdleClosingClient(open: () => KinesisClient, idleMs: Long, clock: () => Long)
  extends KinesisClient {

  private var current: Option[KinesisClient] = None // guarded by this
  private var inFlight = 0 // guarded by this
  private var lastUsedMs = clock() // guarded by this

  override def listShards(streamName: String): Seq[ShardDescription] = use(_.listShards(streamName))

  override def shardIterator(streamName: String, shardId: String, start: IteratorStart): String =
    use(_.shardIterator(streamName, shardId, start))

  override def getRecords(streamName: String, iterator: String, limit: Int): RecordBatch =
    use(_.getRecords(streamName, iterator, limit))

  /** Closes the underlying client if it is open, idle and unused for `idleMs`; true when it did. */
  def closeIfIdle(): Boolean = synchronized {
    val idle = current.isDefined && inFlight == 0 && clock() - lastUsedMs >= idleMs
    if (idle) close()
    idle
  }

  /** Whether an underlying client is open right now. */
  def isOpen: Boolean = synchronized(current.isDefined)

  override def close(): Unit = synchronized {
    current.foreach(_.close())
    current = None
  }

  private def use[T](call: KinesisClient => T): T = {
    val client = synchronized {
      val c = current.getOrElse(open())
      current = Some(c)
      inFlight += 1
      c
    }
    try call(client)
    finally synchronized {
      inFlight -= 1
      lastUsedMs = clock()
    }
  }
}
