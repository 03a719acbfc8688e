package io.github.sparkkinesis.sink

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class PendingLimitSuite extends AnyFunSuite with Matchers {

  test("Given room for two records, when a third is asked for, then it is refused until one is released") {
    val limit = new PendingLimit(maxRecords = 2, maxBytes = 100)
    Seq(limit.tryAcquire(10, 0), limit.tryAcquire(10, 0), limit.tryAcquire(10, 0)) shouldBe Seq(true, true, false)
    limit.release(10)
    limit.tryAcquire(10, 0) shouldBe true
    limit.pending shouldBe ((2, 20L))
  }

  test("Given a byte cap, when a record would pass it, then it waits; a record larger than the cap goes alone") {
    val limit = new PendingLimit(maxRecords = 10, maxBytes = 100)
    limit.tryAcquire(60, 0) shouldBe true
    limit.tryAcquire(60, 0) shouldBe false
    limit.release(60)
    limit.tryAcquire(500, 0) shouldBe true
    limit.tryAcquire(1, 0) shouldBe false
    limit.pending shouldBe ((1, 500L))
  }
}
