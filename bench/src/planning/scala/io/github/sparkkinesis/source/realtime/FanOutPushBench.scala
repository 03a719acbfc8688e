package io.github.sparkkinesis.source.realtime

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import org.apache.hadoop.conf.Configuration

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.compat.JavaCollections._
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon
import io.github.sparkkinesis.source.reading.{FanOutReaderSettings, ReaderSettings, SubscriptionCache, TaskShard}

/**
 * A real-time task's fan-out rows against a plain SubscribeToShard reader, both on the fake client with AWS's push
 * delay (a record reaches subscriptions about 70 ms after it arrives, which kinesis-mock does not model): one record
 * every `intervalMs` into each of `shards` shards, data its put time; the task (RealTimeRows, the code a Spark task
 * runs, without Spark around it) and the plain reader (one thread per shard, one consumer of its own) each take `handed
 * over - put` per record. What the connector adds to fan-out's own delay is the difference. Run by `bench/run --only
 * fanout-push [shards intervalMs seconds pushDelayMs]`; prints figures only.
 */
object FanOutPushBench {

  def main(args: Array[String]): Unit = {
    val given = Seq(4, 50, 20, 70).zipWithIndex.map { case (default, i) => args.lift(i).fold(default)(_.toInt) }
    val (shards, intervalMs, seconds, pushDelayMs) = (given(0), given(1), given(2), given(3))
    println(s"fanout-push: put to hand-over (ms), fake client with a $pushDelayMs ms push delay, $shards shards, " +
      s"a record every $intervalMs ms per shard for $seconds s")
    val clock: () => Long = () => System.currentTimeMillis()
    val fake = new FakeKinesisClient(clock)
    val ids = fake.createStream("s", shards)
    fake.fanOut.pushDelayMillis = pushDelayMs.toLong
    val arn = FakeFanOut.streamArn("s")
    val taskConsumer = fake.registerConsumer(arn, "task").arn
    val rawConsumer = fake.registerConsumer(arn, "raw").arn

    val taskLatencies = new ConcurrentLinkedQueue[Long]()
    val rawLatencies = new ConcurrentLinkedQueue[Long]()
    @volatile var running = true
    val task = rowsOf(fake, ids, taskConsumer)
    val taskThread = thread("task") {
      while (running) if (task.next(100L)) taskLatencies.add(clock() - sentAt(task.get().getBinary(0)))
    }
    val rawThreads = ids.map { id =>
      val subscription = fake.subscribeToShard(rawConsumer, id, IteratorStart.TrimHorizon)
      thread(s"raw-$id") {
        while (running) subscription.next(100L) match {
          case Some(SubscriptionSignal.Event(records, _, _, _)) =>
            records.foreach(r => rawLatencies.add(clock() - sentAt(r.data)))
          case _ => ()
        }
      }
    }
    val deadline = clock() + seconds * 1000L
    var next = clock()
    while (clock() < deadline) {
      ids.foreach(id => fake.putRecordToShard("s", id, clock().toString.getBytes(UTF_8)))
      next += intervalMs
      Thread.sleep(math.max(0L, next - clock()))
    }
    Thread.sleep(pushDelayMs + 1000L) // the last records' push delay, and a margin for both readers
    running = false
    (taskThread +: rawThreads).foreach(_.join(10000L))
    task.close()
    SubscriptionCache.shared.evict(0L)

    val expected = shards * (seconds * 1000 / intervalMs)
    println(f"${"reader"}%-38s ${"records"}%8s ${"p50"}%6s ${"p95"}%6s ${"p99"}%6s ${"max"}%6s")
    println(line("real-time task (RealTimeRows, fan-out)", taskLatencies.asScala.toVector))
    println(line("plain SubscribeToShard reader", rawLatencies.asScala.toVector))
    println(s"about $expected records put; each reader must hand over every one")
  }

  private def rowsOf(fake: FakeKinesisClient, ids: Seq[String], consumer: String): RealTimeRows = {
    val settings = ReaderSettings(
      ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
      10000,
      200L,
      Long.MaxValue,
      60000L,
      5L,
      20L,
      dropMisroutedRecords = false,
      fanOut = Map("s" -> FanOutReaderSettings(consumer, 20000L, 5)))
    val partition = RealTimePartition(
      1L,
      0,
      ids.map(id => TaskShard("s", id, 1L, TrimHorizon, None)),
      RealTimeLineage(ids.map(id => ShardRef("s", id) -> 0).toMap, Set.empty))
    val store = new HadoopShardEndStore(Files.createTempDirectory("fanout-push").toString, new Configuration())
    new RealTimeRows(partition, settings, store, fake, () => System.currentTimeMillis())
  }

  private def sentAt(data: Array[Byte]): Long = new String(data, UTF_8).toLong

  private def thread(name: String)(body: => Unit): Thread = {
    val t = new Thread(() => body, name)
    t.setDaemon(true)
    t.start()
    t
  }

  private def line(reader: String, latencies: Seq[Long]): String = {
    val sorted = latencies.sorted
    def at(q: Double): Long = if (sorted.isEmpty) -1L else sorted(math.min(sorted.size - 1, (q * sorted.size).toInt))
    f"$reader%-38s ${sorted.size}%8d ${at(0.5)}%6d ${at(0.95)}%6d ${at(0.99)}%6d ${sorted.lastOption.getOrElse(-1L)}%6d"
  }
}
