package io.github.sparkkinesis.sink

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{AssumeRoleSettings, ClientSettings, RetrySettings}

class ProducerPoolSuite extends AnyFunSuite with Matchers {

  private val settings = ProducerSettings(
    ClientSettings(
      Some("us-east-1"),
      Some(URI.create("https://127.0.0.1:1")),
      None,
      RetrySettings(0, 1, 1),
      assumeRole = Some(AssumeRoleSettings("arn:aws:iam::123456789012:role/writer", "spark-kinesis", None, None))),
    recordMaxBufferedTimeMs = 100,
    maxConnections = 1,
    aggregationEnabled = true,
    recordTtlMs = 1000,
    maxPendingRecords = 10,
    maxPendingBytes = 1000)

  test(
    "given a producer no task holds, when idle for the idle time, then it is destroyed and the next task gets a new " +
      "one") {
    // Given one producer per settings (a role's rotating credentials live in its provider, not in the key)
    var now = 0L
    val made = scala.collection.mutable.Buffer.empty[FakeRecordProducer]
    val pool = new ProducerPool(_ => { made += new FakeRecordProducer; made.last }, idleMs = 1000L, clock = () => now)
    val first = pool.acquire(settings)
    pool.acquire(settings.copy()).release()
    made should have size 1

    // When it is held, it is never idle; once released, only after the idle time
    now = 5000L
    pool.destroyIdle() shouldBe 0
    first.release()
    now = 5999L
    pool.destroyIdle() shouldBe 0
    now = 6000L
    pool.destroyIdle() shouldBe 1

    // Then it was destroyed, and the next task gets a fresh producer
    made.head.destroyed shouldBe 1
    pool.acquire(settings).release()
    made should have size 2
  }
}
