package io.github.sparkkinesis.aggregation

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** Round trips over many random aggregates; the seed is fixed, so every run checks the same cases. */
class KplDeaggregatorPropertySuite extends AnyFunSuite with Matchers {

  private val HashKeyLimit = BigInt(1) << 128

  // Code points of 1 to 4 UTF-8 bytes; Random.nextString would produce lone surrogates, which UTF-8 cannot carry.
  private val KeyCodePoints: Array[Int] = "az09-_.\u00e4\u00e9\u20ac\u65e5\u672c\ud83d\ude42".codePoints().toArray

  private def randomKey(random: Random): String = {
    val codePoints = Array.fill(1 + random.nextInt(20))(KeyCodePoints(random.nextInt(KeyCodePoints.length)))
    new String(codePoints, 0, codePoints.length)
  }

  /** A random aggregate's content: keys drawn from a small pool (to exercise sharing) or fresh, any data. */
  private def randomRecords(random: Random): Seq[(String, Option[String], Array[Byte])] = {
    val keyPool = Vector.fill(1 + random.nextInt(4))(randomKey(random))
    Seq.fill(1 + random.nextInt(40)) {
      val partitionKey = if (random.nextBoolean()) keyPool(random.nextInt(keyPool.size)) else s"key-${random.nextInt()}"
      val explicitHashKey = if (random.nextInt(3) == 0) Some(BigInt(128, random).toString) else None
      val data = new Array[Byte](if (random.nextInt(5) == 0) 0 else random.nextInt(300))
      random.nextBytes(data)
      (partitionKey, explicitHashKey, data)
    }
  }

  test("Given many random aggregates, when deaggregated, then every sub-record comes back intact and in order") {
    val random = new Random(20240611L)
    (1 to 500).foreach { round =>
      // Given
      val records = randomRecords(random)
      // When
      val decoded = KplDeaggregator.deaggregate(KplTestAggregates.aggregate(records), "outer-key")
      // Then
      withClue(s"round $round: ") {
        decoded.map(r => (r.partitionKey, r.explicitHashKey, r.data.toSeq)) shouldBe
          records.map { case (pk, ehk, data) => (pk, ehk, data.toSeq) }
        decoded.map(_.subSequenceNumber) shouldBe records.indices.map(_.toLong)
        decoded.foreach { r =>
          val hashKey = KplDeaggregator.hashKey(r)
          hashKey should (be >= BigInt(0) and be < HashKeyLimit)
          r.explicitHashKey.foreach(ehk => hashKey shouldBe BigInt(ehk))
        }
      }
    }
  }

  test("Given random aggregates with one byte flipped, when deaggregated, then each passes through whole") {
    val random = new Random(77L)
    (1 to 500).foreach { round =>
      // Given: any flip breaks the magic, the message's MD5, or the digest itself
      val payload = KplTestAggregates.aggregate(randomRecords(random))
      val at = random.nextInt(payload.length)
      payload(at) = (payload(at) ^ (1 + random.nextInt(255))).toByte
      // When
      val decoded = KplDeaggregator.deaggregate(payload, "outer-key")
      // Then
      withClue(s"round $round, byte $at: ") {
        decoded.map(r => (r.partitionKey, r.subSequenceNumber)) shouldBe Seq(("outer-key", 0L))
        decoded.head.data should be theSameInstanceAs payload
      }
    }
  }
}
