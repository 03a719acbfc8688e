package io.github.sparkkinesis.source.planning

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.ManualClock

/** Each shard's planning state as the one owner holds it: new, checked next, or expected, and when it is due. */
class PollScheduleSuite extends AnyFunSuite with Matchers {
  private val FetchMs = 500L
  private val IdleMs = 2000L

  private def schedule(clock: ManualClock) = new PollSchedule(FetchMs, IdleMs, clock)

  test("given a shard never looked at, then it is due at once and checked") {
    val s = schedule(new ManualClock())
    s.isDue("a") shouldBe true
    s.isExpected("a") shouldBe false
    s.msUntilDue(Seq("a")) shouldBe 0L
  }

  test("given a batch's end that expected more of one shard, then that one is read without a check after the " +
    "fetch interval and the other checked after the idle interval") {
    val clock = new ManualClock()
    val s = schedule(clock)
    s.batchEnded(Seq("a", "b"), Set("a"), checkSoon = false)
    s.isExpected("a") shouldBe true
    s.isExpected("b") shouldBe false
    s.msUntilDue(Seq("a")) shouldBe FetchMs
    s.msUntilDue(Seq("a", "b")) shouldBe IdleMs
    clock.advance(FetchMs)
    (s.isDue("a"), s.isDue("b")) shouldBe ((true, false))
  }

  test("given a batch's end whose read-rate cap still held a shard back, then that shard is due no sooner") {
    val s = schedule(new ManualClock())
    s.batchEnded(
      Seq("a", "b", "c"),
      Set("a", "b"),
      checkSoon = false,
      pacedMs = Map("a" -> 7000L, "b" -> 100L, "c" -> 0L))
    (s.msUntilDue(Seq("a")), s.msUntilDue(Seq("b")), s.msUntilDue(Seq("c"))) shouldBe ((7000L, FetchMs, IdleMs))
  }

  test("given an AvailableNow run's batch end, then a shard not expected is checked again after the fetch interval") {
    val s = schedule(new ManualClock())
    s.batchEnded(Seq("b"), Set.empty[String], checkSoon = true)
    s.isExpected("b") shouldBe false
    s.msUntilDue(Seq("b")) shouldBe FetchMs
  }

  test("given an expected shard, then it stays expected until a batch that reads it ends without expecting more") {
    val clock = new ManualClock()
    val s = schedule(clock)
    s.batchEnded(Seq("a"), Set("a"), checkSoon = false)
    s.batchEnded(Seq("b"), Set.empty[String], checkSoon = false) // a batch of another shard
    s.checkedIdle(Seq("a")) // a check (children of a finished shard) moves its due instant alone
    s.isExpected("a") shouldBe true
    s.msUntilDue(Seq("a")) shouldBe IdleMs
    s.batchEnded(Seq("a"), Set.empty[String], checkSoon = false)
    s.isExpected("a") shouldBe false
  }

  test("given a run resumed after an earlier run's batch, then its expected shards are due as before") {
    val clock = new ManualClock()
    val s = schedule(clock)
    s.checkedWalking(Seq("b"))
    s.expect(Seq("a", "b"))
    (s.isExpected("a"), s.isExpected("b")) shouldBe ((true, true))
    s.isDue("a") shouldBe true
    // A shard expected but never looked at waits for nothing (no overflow from its "at once").
    s.msUntilDue(Seq("a")) shouldBe 0L
    s.msUntilDue(Seq("a", "b")) shouldBe FetchMs
    s.mostOverdue(Seq("b", "a"), 1) shouldBe Seq("a")
  }

  test("given shards no longer tracked, then they are forgotten: new again if ever tracked again") {
    val s = schedule(new ManualClock())
    s.batchEnded(Seq("a", "b"), Set("a", "b"), checkSoon = false)
    s.retain(Set("b"))
    (s.isExpected("a"), s.isDue("a")) shouldBe ((false, true))
    (s.isExpected("b"), s.isDue("b")) shouldBe ((true, false))
  }
}
