package io.github.sparkkinesis.source.planning

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.offsets.{KinesisSourceOffset, ShardState}
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, AfterSubSequenceNumber}

/** The driver's retention checks of a position inside a KPL aggregate: the aggregate's rest is a record to read. */
class RetentionChecksSuite extends AnyFunSuite with Matchers {

  private val inside = AfterSubSequenceNumber("5", 1L)

  test("given a position inside an aggregate that has expired, when the trim horizon is checked, then its records " +
    "not handed over are surely lost") {
    val tracked = Map("a" -> ShardState(inside, Nil), "b" -> ShardState(AfterSequenceNumber("5"), Nil))
    TrimHorizonCheck.candidates(tracked) shouldBe Seq("a", "b")
    TrimHorizonCheck.behind(tracked, Map("a" -> "7", "b" -> "7"), Map.empty) shouldBe Seq(
      TrimHorizonCheck.Behind("a", inside, "7", surelyLost = true),
      TrimHorizonCheck.Behind("b", AfterSequenceNumber("5"), "7", surelyLost = false))
    TrimHorizonCheck.behind(tracked, Map("a" -> "5"), Map.empty) shouldBe empty // the aggregate is still retained
  }

  test("given a batch planned before a restart that starts inside an expired aggregate and recorded no end, when it " +
    "is planned again, then its start is lost") {
    val offset = KinesisSourceOffset(3L, Map("s" -> Map("a" -> ShardState(inside, Nil))))
    val records = Map(("s", "a") -> None)
    ReplayCheck.candidates(offset, records) shouldBe Map("s" -> Seq("a"))
    ReplayCheck.lost(offset, records, Map(("s", "a") -> Some("7"))).map(l => (l.shardId, l.start)) shouldBe
      Seq("a" -> inside)
    ReplayCheck.lost(offset, records, Map(("s", "a") -> Some("5"))) shouldBe empty
  }
}
