package io.github.sparkkinesis.source.reading

import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** How a real-time task's feeds share its fetch budget: equal shares always, loans of the free half while it lasts. */
class FetchBudgetSuite extends AnyFunSuite with Matchers {

  private val MiB = 1L << 20

  private val Loan = FetchBudget.LoanBytes

  /** Four pages' worth of whole loans among 5 feeds: equal shares of 0.4, whole loans of 0.6, a lending half of 2. */
  private def budget() = new FetchBudget(4 * Loan, 100000L, () => 5)

  /** Runs `n` holders of the budget on threads of their own until `release`; returns their shares once released. */
  private def holdAtOnce(b: FetchBudget, n: Int)(whileHeld: => FetchShare): (Seq[FetchShare], FetchShare) = {
    val release = new CountDownLatch(1)
    val held = new CountDownLatch(n)
    val pool = Executors.newFixedThreadPool(n)
    try {
      val holders = (1 to n).map { _ =>
        pool.submit(() =>
          b.holding(0L) { share =>
            held.countDown()
            release.await(10, TimeUnit.SECONDS)
            share
          })
      }
      held.await(10, TimeUnit.SECONDS) shouldBe true
      val during = whileHeld
      release.countDown()
      (holders.map(_.get(10, TimeUnit.SECONDS)), during)
    } finally pool.shutdownNow()
  }

  test("given a budget shared by 100 feeds, when a feed fetches alone, then its page holds its equal share and a " +
    "whole loan") {
    val b = new FetchBudget(32 * MiB, 100000L, () => 100)

    val share = b.holding(0L)(identity)

    b.equalShare shouldBe FetchShare(32 * MiB / 200, 500L)
    share.bytes shouldBe Loan
    share.rows shouldBe 500L + (Loan - b.equalShare.bytes) * 100000L / (32 * MiB) // rows lent with the bytes
  }

  test("given feeds holding the whole lending half, when another fetches without waiting, then it gets its equal " +
    "share only, every borrower got rows with its bytes, and what all of them hold stays within the budget") {
    val b = budget()

    val (holders, fifth) = holdAtOnce(b, 4)(b.holding(0L)(identity))

    val equal = b.equalShare.bytes
    holders.map(_.bytes).sorted shouldBe Seq(equal + 2 * Loan - 3 * (Loan - equal), Loan, Loan, Loan)
    holders.map(_.rows).min should be > b.equalShare.rows // every borrower gets rows with its bytes
    holders.map(_.rows).sum + fifth.rows should be <= 100000L
    fifth shouldBe b.equalShare
    holders.map(_.bytes).sum + fifth.bytes should be <= 4 * Loan
    b.holding(0L)(identity).bytes shouldBe Loan // given back: whole loans again
  }

  test("given the lending half all lent, when a feed behind its tip waits for a loan, then it gets a whole one as " +
    "soon as one is given back") {
    val b = budget()
    @volatile var waiterThread: Thread = null
    val waiter = Executors.newSingleThreadExecutor { r: Runnable =>
      waiterThread = new Thread(r)
      waiterThread
    }
    try {
      var waiting: java.util.concurrent.Future[FetchShare] = null
      holdAtOnce(b, 4) {
        waiting = waiter.submit(() => b.holding(10000L)(identity))
        val deadline = System.currentTimeMillis() + 10000L
        while ((waiterThread == null || waiterThread.getState != Thread.State.TIMED_WAITING) &&
          System.currentTimeMillis() < deadline) Thread.`yield`()
        waiting.isDone shouldBe false // it waits for a loan rather than fetch with its equal share
        b.equalShare
      }
      waiting.get(10, TimeUnit.SECONDS).bytes shouldBe Loan
    } finally waiter.shutdown()
  }

  test("given a task of one shard, when it fetches, then its equal share alone is larger than a loan, so it reads " +
    "whole Kinesis pages") {
    val b = new FetchBudget(32 * MiB, 100000L, () => 1)

    b.holding(0L)(identity) shouldBe FetchShare(16 * MiB, 50000L)
  }

  test("given the lending half all lent, when a page holds less than its loan, then its reservation keeps only what " +
    "it fills and a reader waiting for a loan gets a whole one at once") {
    val b = budget()
    val lent = (1 to 3).map(_ => b.reserve(0L)) :+ b.reserve(0L)
    b.reserve(0L) shouldBe FetchBudget.Reservation(b.equalShare, FetchShare(0L, 0L)) // nothing left to lend
    val own = b.equalShare.bytes

    val kept = b.keepOnly(lent.head, own + 100L) // a page at its shard's tip: 100 bytes beyond the equal share

    kept.loan.bytes shouldBe 100L
    kept.share.bytes shouldBe own + 100L
    b.keepOnly(kept, own + 100L) shouldBe kept // a second trim changes nothing
    b.reserve(0L).share.bytes shouldBe Loan - 100L // all the page did not fill is lent again at once
  }
}
