package io.github.sparkkinesis.client

/**
 * A [[KinesisClient]] that opens its underlying client on first use and closes it once no call has been in flight for
 * `idleMs` ([[closeIfIdle]]), opening a new one on the next call. Holders keep this object for as long as they like;
 * only the connections, threads and credential refreshes of the underlying client are given back. Its enhanced fan-out
 * calls go to the underlying client's; a subscription renews itself at least every 5 minutes, a call that keeps a
 * client reading through subscriptions from looking idle for longer.
 */
private[client] final class IdleClosingClient(
    open: () => KinesisClient,
    idleMs: Long,
    clock: () => Long,
    opened: IdleClosingClient => Unit = _ => ())
    extends KinesisClient with FanOutClient with SinkClient {

  private var current: Option[KinesisClient] = None // guarded by this
  private var inFlight = 0 // guarded by this
  private var lastUsedMs = clock() // guarded by this

  override def listShards(streamName: String): Seq[ShardDescription] = use(_.listShards(streamName))

  override def shardIterator(streamName: String, shardId: String, start: IteratorStart): String =
    use(_.shardIterator(streamName, shardId, start))

  override def getRecords(streamName: String, iterator: String, limit: Int): RecordBatch =
    use(_.getRecords(streamName, iterator, limit))

  override def streamArn(streamName: String): String = fanOut(_.streamArn(streamName))

  override def describeConsumer(streamArn: String, consumerName: String): Option[ConsumerDescription] =
    fanOut(_.describeConsumer(streamArn, consumerName))

  override def describeConsumerByArn(consumerArn: String): Option[ConsumerDescription] =
    fanOut(_.describeConsumerByArn(consumerArn))

  override def registerConsumer(
      streamArn: String,
      consumerName: String,
      tags: Map[String, String]): ConsumerDescription =
    fanOut(_.registerConsumer(streamArn, consumerName, tags))

  override def listConsumers(streamArn: String): Seq[ConsumerDescription] = fanOut(_.listConsumers(streamArn))

  override def consumerTags(consumerArn: String): Map[String, String] = fanOut(_.consumerTags(consumerArn))

  override def tagConsumer(consumerArn: String, tags: Map[String, String]): Unit =
    fanOut(_.tagConsumer(consumerArn, tags))

  override def deregisterConsumer(consumerArn: String): Unit = fanOut(_.deregisterConsumer(consumerArn))

  override def subscribeToShard(consumerArn: String, shardId: String, start: IteratorStart): ShardSubscription =
    fanOut(_.subscribeToShard(consumerArn, shardId, start))

  override def maxRecordSizeInKiB(streamName: String): Option[Int] =
    use(c => SinkClient.of(c).maxRecordSizeInKiB(streamName))

  override def writeRecord(
      streamName: String,
      partitionKey: String,
      explicitHashKey: Option[String],
      data: Array[Byte]): String =
    use(c => SinkClient.of(c).writeRecord(streamName, partitionKey, explicitHashKey, data))

  override def writeRecords(streamName: String, entries: Seq[PutEntry]): Seq[PutOutcome] =
    use(c => SinkClient.of(c).writeRecords(streamName, entries))

  private def fanOut[T](call: FanOutClient => T): T = use {
    case client: FanOutClient => call(client)
    case other => throw new IllegalStateException(s"$other cannot use enhanced fan-out (SubscribeToShard)")
  }

  /**
   * When no call has used this client for `idleMs` (since it was made, if never): closes the underlying client if one
   * is open and runs `retired` before any call can open another; true when it did.
   */
  def retireIfIdle(retired: () => Unit): Boolean = synchronized {
    val idle = inFlight == 0 && clock() - lastUsedMs >= idleMs
    if (idle) {
      close()
      retired()
    }
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
      val c = current.getOrElse {
        val fresh = open()
        opened(this)
        fresh
      }
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
