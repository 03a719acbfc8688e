package io.github.sparkkinesis.client

import java.net.URI
import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.collection.mutable
import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class ClientCacheSuite extends AnyFunSuite with Matchers {

  private val roleSettings = ClientSettings(
    Some("us-east-1"),
    Some(URI.create("http://127.0.0.1:1")),
    None,
    RetrySettings(0, 1, 1),
    assumeRole = Some(AssumeRoleSettings(
      "arn:aws:iam::123456789012:role/reader",
      "spark-kinesis",
      None,
      None)))

  /** Clients that count how often they are opened and closed; `gate` holds listShards until it opens. */
  private final class Counting {
    val opened = mutable.Buffer.empty[KinesisClient]
    var closed = 0
    @volatile var gate = new CountDownLatch(0)
    def open(settings: ClientSettings): KinesisClient = synchronized {
      val client = new KinesisClient {
        override def listShards(streamName: String): Seq[ShardDescription] = {
          gate.await(10, TimeUnit.SECONDS)
          Nil
        }
        override def shardIterator(streamName: String, shardId: String, start: IteratorStart): String = "it"
        override def getRecords(streamName: String, iterator: String, limit: Int): RecordBatch =
          RecordBatch(Nil, None, 0L)
        override def close(): Unit = Counting.this.synchronized(closed += 1)
      }
      opened += client
      client
    }
  }

  test("given one role's settings, when asked again after its credentials rotated, then the same client serves") {
    // Given a cache, and a client for settings that name a role (its credentials rotate inside the provider)
    val counting = new Counting
    val cache = new ClientCache(counting.open, idleMs = 1000L, clock = () => 0L)
    val first = cache(roleSettings)
    first.listShards("s")

    // When the same settings come again (a later batch, another task, a rotated session)
    val again = cache(roleSettings.copy())
    again.listShards("s")

    // Then one client, opened once
    again should be theSameInstanceAs first
    counting.opened should have size 1
  }

  test("given a client idle for the idle time, when swept, then it is closed, and a later call opens a new one") {
    var now = 0L
    val counting = new Counting
    val cache = new ClientCache(counting.open, idleMs = 1000L, clock = () => now)
    val client = cache(roleSettings)
    client.listShards("s")

    now = 999L
    cache.sweep() shouldBe 0
    now = 1000L
    cache.sweep() shouldBe 1
    counting.closed shouldBe 1

    client.listShards("s") // the holder keeps its object; a new underlying client is opened
    counting.opened should have size 2
    cache.sweep() shouldBe 0
  }

  test("given a call in flight past the idle time, when swept, then the client is not closed under it") {
    var now = 0L
    val counting = new Counting
    counting.gate = new CountDownLatch(1)
    val cache = new ClientCache(counting.open, idleMs = 1000L, clock = () => now)
    val client = cache(roleSettings)
    val call = Future(client.listShards("slow"))
    // Bounded wait for the call to be in flight (the client is opened by it)
    val deadline = System.nanoTime() + 10.seconds.toNanos
    while (counting.synchronized(counting.opened.isEmpty) && System.nanoTime() < deadline) Thread.`yield`()

    now = 5000L
    cache.sweep() shouldBe 0
    counting.gate.countDown()
    Await.result(call, 10.seconds)
    now = 6000L
    cache.sweep() shouldBe 1
  }

  test("given credentials given as options that rotate, when the old ones go unused for the idle time, then their " +
    "clients are closed and removed from the cache, not piled up") {
    // Given a client per credential set, as a query restarted with rotated keys asks for
    var now = 0L
    val counting = new Counting
    val cache = new ClientCache(counting.open, idleMs = 1000L, clock = () => now)
    def keys(n: Int) =
      roleSettings.copy(assumeRole = None, credentials = Some(AwsCredentials(s"AKID$n", "secret", None)))
    val old = cache(keys(1))
    old.listShards("s")
    now = 600L
    cache(keys(2)).listShards("s")
    cache.size shouldBe 2

    // When the first set is idle for the idle time, and the second is not
    now = 1000L
    cache.sweep() shouldBe 1

    // Then its client is closed and forgotten; the second stays
    counting.closed shouldBe 1
    cache.size shouldBe 1
    now = 1600L
    cache.sweep() shouldBe 1
    cache.size shouldBe 0
    counting.closed shouldBe 2
    // A holder that calls its forgotten client again reopens it, and it is swept like any other
    old.listShards("s")
    cache.size shouldBe 1
    cache(keys(1)) should not be theSameInstanceAs(old)
    now = 5000L
    cache.sweep() shouldBe 2
    cache.size shouldBe 0
    counting.closed shouldBe 3
  }
}
