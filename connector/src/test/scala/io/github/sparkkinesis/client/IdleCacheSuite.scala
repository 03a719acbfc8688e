package io.github.sparkkinesis.client

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The DynamoDB clients' cache: a resource per key, lent per call, closed and forgotten once idle. */
class IdleCacheSuite extends AnyFunSuite with Matchers {

  /** Resources named after their key and the how-manieth opening; closing one notes its name. */
  private final class Resources {
    val opened: mutable.Buffer[String] = mutable.Buffer.empty
    val closed: mutable.Buffer[String] = mutable.Buffer.empty
    def open(key: String): String = { opened += s"$key#${opened.size}"; opened.last }
  }

  test("given a resource unused for the idle time, when swept, then it is closed and removed, and the next call " +
    "opens a new one") {
    val clock = new ManualClock()
    val resources = new Resources
    val cache = new IdleCache[String, String](resources.open, resources.closed += _, idleMs = 1000L, clock = clock)
    cache.use("key-1")(identity) shouldBe "key-1#0"
    cache.use("key-1")(identity) shouldBe "key-1#0"
    clock.advance(999L)
    cache.sweep() shouldBe 0
    cache.size shouldBe 1

    clock.advance(1L)
    cache.sweep() shouldBe 1
    resources.closed shouldBe Seq("key-1#0")
    cache.size shouldBe 0
    cache.use("key-1")(identity) shouldBe "key-1#1"
  }

  test("given a call in flight past the idle time, when swept, then its resource is not closed under it") {
    val clock = new ManualClock()
    val resources = new Resources
    val cache = new IdleCache[String, String](resources.open, resources.closed += _, idleMs = 1000L, clock = clock)
    cache.use("key-1") { _ =>
      clock.advance(5000L)
      cache.sweep() shouldBe 0
    }
    resources.closed shouldBe empty
    clock.advance(1000L)
    cache.sweep() shouldBe 1
  }
}
