package io.github.sparkkinesis.bench

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import scala.collection.JavaConverters._

import software.amazon.awssdk.services.kinesis.model.ListShardsRequest

import io.github.sparkkinesis.it.TestStreams

/**
 * The floor of fan-out's put-to-sink latency on this emulator: the plain SDK SubscribeToShard client
 * ([[RawSubscriber]]) subscribed to every shard of a fresh stream while the latency part's producer runs, taking `now -
 * sent` for each record as its event arrives. Whatever the emulator's push cadence costs, it costs here too.
 */
object RawSubscribeLatency {

  def run(config: BenchConfig): Seq[Long] = {
    val stream = TestStreams.createStream("bench-raw-latency", config.latencyShards)
    val shardIds = TestStreams.client.listShards(ListShardsRequest.builder().streamName(stream).build())
      .shards.asScala.map(_.shardId).toVector
    RawSubscriber.withConsumer(stream, "bench-raw-latency") { (consumerArn, _) =>
      val latencies = new ConcurrentLinkedQueue[java.lang.Long]()
      val live = new CountDownLatch(shardIds.size) // each subscription has sent its first event
      @volatile var measured = false // cancelling the subscriptions at the end fails them: not worth a message
      val calls = shardIds.map { shardId =>
        var first = true
        RawSubscriber.subscribe(
          consumerArn,
          shardId,
          { e =>
            val now = System.currentTimeMillis()
            e.records.asScala.foreach(r => latencies.add(now - new String(r.data.asByteArray, UTF_8).toLong))
            if (first) { first = false; live.countDown() }
          },
          e => if (!measured) System.err.println(s"bench: raw latency subscription to $shardId failed: $e"))
      }
      try {
        if (!live.await(30, TimeUnit.SECONDS))
          throw new IllegalStateException("the raw subscriptions sent no event in 30 s")
        val (sent, _) = LatencyBench.produce(stream, config)
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        while (latencies.size < sent && System.nanoTime() < deadline) Thread.sleep(50)
        if (latencies.size < sent) {
          throw new IllegalStateException(s"the raw subscriptions received ${latencies.size} of $sent records in 60 s")
        }
        latencies.asScala.map(_.longValue).toVector
      } finally {
        measured = true
        calls.foreach(_.cancel(true))
      }
    }
  }
}
