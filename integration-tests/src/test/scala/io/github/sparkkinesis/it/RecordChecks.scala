package io.github.sparkkinesis.it

import org.scalatest.Assertions.fail
import software.amazon.awssdk.services.kinesis.model.Shard

/** Assertions on what a sink received, with failure messages that say which records are wrong and how. */
object RecordChecks {

  private val Examples = 10

  /**
   * Fails unless `actual` holds exactly the `expected` items (such as (partitionKey, payload) pairs), each exactly
   * once, listing examples of what is missing, duplicated or unexpected.
   */
  def assertExactlyOnce[T](expected: Seq[T], actual: Seq[T], context: String): Unit = {
    val want = counts(expected)
    val got = counts(actual)
    val missing = want.keys.filterNot(got.contains).toSeq
    val unexpected = got.keys.filterNot(want.contains).toSeq
    val wrongCount = want.keys.filter(k => got.get(k).exists(_ != want(k))).toSeq
    if (missing.nonEmpty || unexpected.nonEmpty || wrongCount.nonEmpty) {
      fail(s"$context: expected ${expected.size} records exactly once, got ${actual.size}; " +
        s"${missing.size} missing (e.g. ${missing.take(Examples).mkString(", ")}); " +
        s"${unexpected.size} unexpected (e.g. ${unexpected.take(Examples).mkString(", ")}); " +
        s"${wrongCount.size} delivered the wrong number of times " +
        s"(e.g. ${wrongCount.take(Examples).map(k => s"$k x${got(k)}").mkString(", ")})")
    }
  }

  /** [[assertExactlyOnce]] for records a test put and records a sink received. */
  def assertDeliveredExactlyOnce(expected: Seq[Put], actual: Seq[OutputRecord]): Unit =
    assertExactlyOnce(
      expected.map(p => (p.partitionKey, p.payload)),
      actual.map(r => (r.partitionKey, r.payload)),
      "records in the sink")

  /**
   * Fails unless, for every partition key, the payloads in `delivered` order are those of `expectedInOrder` in its
   * order: the per-key ordering Kinesis promises to readers.
   */
  def assertPerKeyOrder(expectedInOrder: Seq[(String, String)], delivered: Seq[(String, String)]): Unit = {
    val want = expectedInOrder.groupBy(_._1)
    val got = delivered.groupBy(_._1)
    want.keys.toSeq.sorted.foreach { key =>
      val w = want(key).map(_._2)
      val g = got.getOrElse(key, Nil).map(_._2)
      if (w != g) {
        val firstDiff = w.zipAll(g, "<none>", "<none>").indexWhere { case (a, b) => a != b }
        fail(s"partition key $key: records delivered out of order or not exactly once; first difference at " +
          s"#$firstDiff: expected ${w.lift(firstDiff).getOrElse("<none>")}, got " +
          s"${g.lift(firstDiff).getOrElse("<none>")} " +
          s"(expected ${w.size} records, got ${g.size})")
      }
    }
  }

  /**
   * The order a reader must deliver the records of each partition key in: within a shard by sequence number, and every
   * record of a parent shard before any record of its children (deeper shards in the lineage come later).
   */
  def expectedOrder(puts: Seq[Put], shards: Seq[Shard]): Seq[(String, String)] = {
    val depth = depths(shards)
    puts.sortBy(p =>
      (depth.getOrElse(p.shardId, fail(s"shard ${p.shardId} is not in ListShards")), BigInt(p.sequenceNumber)))
      .map(p => (p.partitionKey, p.payload))
  }

  /** Fails unless every shard's records are delivered in (sequenceNumber, subSequenceNumber) order. */
  def assertShardOrder(delivered: Seq[OutputRecord]): Unit =
    delivered.groupBy(_.shardId).foreach { case (shard, records) =>
      val positions = records.map(r => (BigInt(r.sequenceNumber), r.subSequenceNumber))
      val sorted = positions.sorted
      if (positions != sorted) {
        val i = positions.zip(sorted).indexWhere { case (a, b) => a != b }
        fail(s"shard $shard: record #$i delivered at ${positions(i)} where ${sorted(i)} was due")
      }
    }

  /** How many generations of parents each shard has (0 for shards the stream was created with). */
  def depths(shards: Seq[Shard]): Map[String, Int] = {
    val byId = shards.map(s => s.shardId() -> s).toMap
    def depth(id: String): Int = byId.get(id) match {
      case None => 0 // a parent past its retention period is no longer listed
      case Some(s) => (Option(s.parentShardId()).toSeq ++ Option(s.adjacentParentShardId()).toSeq)
          .map(p => depth(p) + 1).foldLeft(0)(math.max)
    }
    byId.keys.map(id => id -> depth(id)).toMap
  }

  private def counts[T](items: Seq[T]): Map[T, Int] = items.groupBy(identity).map { case (k, v) => k -> v.size }
}
