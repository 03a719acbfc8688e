package io.github.sparkkinesis.bench

import java.security.MessageDigest
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import scala.collection.JavaConverters._

/**
 * The plain SDK SubscribeToShard client ([[RawSubscriber]]) draining the backlog: one subscription per shard from
 * TRIM_HORIZON, all shards at once, each done at the first event that says MillisBehindLatest 0. Timed from the first
 * subscribe to the last shard done; `registration` is the time registering its consumer took before.
 */
object RawSubscribeDrain {

  final case class Result(drain: DrainResult, registrationSeconds: Double) {

    /** The drain timed from registering the consumer, as the connector's time from `start()` includes its own. */
    def withRegistration: DrainResult = drain.copy(seconds = drain.seconds + registrationSeconds)
  }

  def run(backlog: Backlog): Result =
    RawSubscriber.withConsumer(backlog.stream, "bench-raw") { (consumerArn, registration) =>
      val started = System.nanoTime()
      val done = new CountDownLatch(backlog.shardIds.size)
      val counts = backlog.shardIds.map(_ => new RawDrain.Counts)
      val kinesisRecords = new AtomicLong()
      val calls = backlog.shardIds.zip(counts).map { case (shardId, count) =>
        val md5 = MessageDigest.getInstance("MD5")
        var finished = false
        RawSubscriber.subscribe(
          consumerArn,
          shardId,
          { e =>
            e.records.asScala.foreach { r =>
              kinesisRecords.incrementAndGet()
              RawDrain.deaggregate(r.data.asByteArray, r.partitionKey, md5, count)
            }
            if (!finished && e.millisBehindLatest == 0L) {
              finished = true
              done.countDown()
            }
          },
          e => if (!finished) System.err.println(s"bench: raw subscription to $shardId failed: $e"))
      }
      if (!done.await(10, TimeUnit.MINUTES))
        throw new IllegalStateException("the raw subscriptions did not catch up in 10 minutes")
      val seconds = (System.nanoTime() - started) / 1e9
      calls.foreach(_.cancel(true))
      Result(DrainResult(counts.map(_.userRecords).sum, kinesisRecords.get(), seconds), registration)
    }
}
