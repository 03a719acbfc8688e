package io.github.sparkkinesis.source.planning

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{HashKeyRange, ShardDescription}
import io.github.sparkkinesis.offsets.{ShardState, StartingPosition}
import io.github.sparkkinesis.offsets.ShardPosition._

class TrackedShardsSuite extends AnyFunSuite with Matchers {

  private def shard(id: String, parents: Seq[String] = Nil, closed: Boolean = false) = ShardDescription(
    id,
    parents.headOption,
    parents.drop(1).headOption,
    HashKeyRange(0, 1),
    "1",
    if (closed) Some("9") else None)

  // Given a stream that was split once: p (closed) -> a, b (open); and an unrelated open shard c.
  private val listing = Seq(shard("p", closed = true), shard("a", Seq("p")), shard("b", Seq("p")), shard("c"))
  private val now = 1000L

  test("given LATEST, then open shards start at the query's start time and closed ones count as read") {
    TrackedShards.initial("s", StartingPosition.Latest, listing, now) shouldBe Map(
      "p" -> ShardState(ShardEnd, Nil),
      "a" -> ShardState(AtTimestamp(now), Seq("p")),
      "b" -> ShardState(AtTimestamp(now), Seq("p")),
      "c" -> ShardState(AtTimestamp(now), Nil))
  }

  test("given TRIM_HORIZON, then every shard starts at its oldest record and children wait for parents") {
    val initial = TrackedShards.initial("s", StartingPosition.TrimHorizon, listing, now)
    initial.values.map(_.position).toSet shouldBe Set(TrimHorizon)
    ShardState.readable(initial) shouldBe Seq("c", "p")
  }

  test("given AT_TIMESTAMP, then every shard starts at that instant") {
    TrackedShards.initial("s", StartingPosition.AtTimestamp(5L), listing, now).values.map(_.position).toSet shouldBe
      Set(AtTimestamp(5L))
  }

  test("given per-shard positions, then named shards start there, their ancestors are skipped, others trim") {
    val initial = TrackedShards.initial(
      "s",
      StartingPosition.PerShard(Map("a" -> Some(AfterSequenceNumber("42")), "b" -> None)),
      listing,
      now)
    initial("a").position shouldBe AfterSequenceNumber("42")
    initial("b").position shouldBe AtTimestamp(now)
    initial("p").position shouldBe ShardEnd
    initial("c").position shouldBe TrimHorizon
  }

  test("given per-shard positions naming an unknown shard, then the message lists the stream's shards") {
    val message = intercept[IllegalArgumentException](
      TrackedShards.initial("s", StartingPosition.PerShard(Map("zzz" -> None)), listing, now)).getMessage
    message should include("zzz")
    message should include("a, b, c, p")
  }

  test("given a split while running, then the children are added at TRIM_HORIZON waiting for the parent") {
    val tracked = Map("c" -> ShardState(AfterSequenceNumber("5"), Nil))
    val next =
      TrackedShards.reconcile(tracked, Seq(shard("c", closed = true), shard("d", Seq("c")), shard("e", Seq("c"))))
    next.lost shouldBe Nil
    next.shards("d") shouldBe ShardState(TrimHorizon, Seq("c"))
    ShardState.readable(next.shards) shouldBe Seq("c")
    ShardState.readable(next.shards + ("c" -> ShardState(ShardEnd, Nil))) shouldBe Seq("d", "e")
  }

  test("given a finished parent that expired, then it is forgotten and its children stop waiting for it") {
    val tracked = Map("p" -> ShardState(ShardEnd, Nil), "a" -> ShardState(TrimHorizon, Seq("p")))
    val next = TrackedShards.reconcile(tracked, Seq(shard("a", Seq("p"))))
    next.shards shouldBe Map("a" -> ShardState(TrimHorizon, Nil))
    next.lost shouldBe Nil
  }

  test("given an unfinished shard that is no longer listed, then it is reported lost") {
    val tracked = Map("p" -> ShardState(AfterSequenceNumber("3"), Nil), "a" -> ShardState(TrimHorizon, Seq("p")))
    val next = TrackedShards.reconcile(tracked, Seq(shard("a", Seq("p"))))
    next.lost shouldBe Seq("p")
  }

  test("given a merge, then the child waits for both parents") {
    val tracked = Map("a" -> ShardState(TrimHorizon, Nil), "b" -> ShardState(TrimHorizon, Nil))
    val next = TrackedShards.reconcile(
      tracked,
      Seq(shard("a", closed = true), shard("b", closed = true), shard("m", Seq("a", "b"))))
    next.shards("m").waitsFor should contain theSameElementsAs Seq("a", "b")
    ShardState.readable(next.shards + ("a" -> ShardState(ShardEnd, Nil))) shouldBe Seq("b")
  }
}
