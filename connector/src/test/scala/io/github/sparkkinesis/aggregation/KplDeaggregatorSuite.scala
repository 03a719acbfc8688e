package io.github.sparkkinesis.aggregation

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import KplTestAggregates.{aggregate, encodeMessage, frame, Entry, Magic}

class KplDeaggregatorSuite extends AnyFunSuite with Matchers {

  private def bytes(s: String): Array[Byte] = s.getBytes(UTF_8)

  private def text(record: UserRecord): String = new String(record.data, UTF_8)

  /** Asserts `payload` came back untouched as one plain record under `partitionKey`. */
  private def assertPassthrough(payload: Array[Byte], partitionKey: String = "outer-key"): Unit = {
    val records = KplDeaggregator.deaggregate(payload, partitionKey)
    records should have size 1
    records.head.data should be theSameInstanceAs payload
    records.head.partitionKey shouldBe partitionKey
    records.head.explicitHashKey shouldBe None
    records.head.subSequenceNumber shouldBe 0L
  }

  test("Given a plain payload, when deaggregated, then it is one record with the outer key and no copy") {
    assertPassthrough(bytes("""{"plain": "json record, long enough to hold magic and digest"}"""))
    assertPassthrough(Array.emptyByteArray)
  }

  test("Given an aggregate sharing one partition key, when deaggregated, then sub-records come out in order") {
    // Given
    val payload = aggregate(Seq(("pk", None, bytes("one")), ("pk", None, bytes("two")), ("pk", None, bytes("three"))))
    // When
    val records = KplDeaggregator.deaggregate(payload, "outer-key")
    // Then
    records.map(text) shouldBe Seq("one", "two", "three")
    records.map(_.partitionKey) shouldBe Seq("pk", "pk", "pk")
    records.map(_.explicitHashKey) shouldBe Seq(None, None, None)
    records.map(_.subSequenceNumber) shouldBe Seq(0L, 1L, 2L)
  }

  test("Given unique partition keys and some explicit hash keys, when deaggregated, then each keeps its own keys") {
    // Given
    val payload = aggregate(Seq(
      ("alpha", Some("12345"), bytes("a")),
      ("beta", None, bytes("b")),
      ("gamma", Some("340282366920938463463374607431768211455"), bytes("c")),
      ("alpha", Some("12345"), bytes("d"))))
    // When
    val records = KplDeaggregator.deaggregate(payload, "outer-key")
    // Then
    records.map(r => (r.partitionKey, r.explicitHashKey, text(r), r.subSequenceNumber)) shouldBe Seq(
      ("alpha", Some("12345"), "a", 0L),
      ("beta", None, "b", 1L),
      ("gamma", Some("340282366920938463463374607431768211455"), "c", 2L),
      ("alpha", Some("12345"), "d", 3L))
  }

  test("Given sub-records with empty data, when deaggregated, then they are kept as empty records") {
    val records = KplDeaggregator.deaggregate(
      aggregate(Seq(("k", None, Array.emptyByteArray), ("k", None, bytes("x")), ("k", None, Array.emptyByteArray))),
      "outer-key")
    records.map(_.data.length) shouldBe Seq(0, 1, 0)
    records.map(_.subSequenceNumber) shouldBe Seq(0L, 1L, 2L)
  }

  test("Given a single-record aggregate, when deaggregated, then the sub-record's own partition key wins") {
    val records = KplDeaggregator.deaggregate(aggregate(Seq(("inner", None, bytes("x")))), "outer-key")
    records.map(r => (r.partitionKey, text(r), r.subSequenceNumber)) shouldBe Seq(("inner", "x", 0L))
  }

  test("Given records with tags and unknown fields, when deaggregated, then those are skipped") {
    // Given: tags (field 4) and an unknown top-level field 9, appended as protobuf merges concatenated messages
    val tagged = Entry(0, None, bytes("tagged"), tags = Seq("env" -> Some("prod"), "x" -> None))
    val message = encodeMessage(Seq("k"), Nil, Seq(tagged)) ++ Array[Byte]((9 << 3).toByte, 42)
    // When
    val records = KplDeaggregator.deaggregate(frame(message), "outer-key")
    // Then
    records.map(r => (r.partitionKey, text(r))) shouldBe Seq(("k", "tagged"))
  }

  test("Given records written before the key tables, when deaggregated, then indexes still resolve") {
    val message =
      encodeMessage(Nil, Nil, Seq(Entry(1, Some(0), bytes("late")))) ++ encodeMessage(Seq("a", "b"), Seq("7"), Nil)
    val records = KplDeaggregator.deaggregate(frame(message), "outer-key")
    records.map(r => (r.partitionKey, r.explicitHashKey, text(r))) shouldBe Seq(("b", Some("7"), "late"))
  }

  test("Given an aggregate whose MD5 does not match, when deaggregated, then it passes through whole") {
    val payload = aggregate(Seq(("k", None, bytes("one")), ("k", None, bytes("two"))))
    payload(payload.length - 1) = (payload(payload.length - 1) ^ 1).toByte
    assertPassthrough(payload)
  }

  test("Given a truncated aggregate, when deaggregated, then it passes through whole") {
    val payload = aggregate(Seq(("k", None, bytes("one")), ("k", None, bytes("two"))))
    assertPassthrough(payload.take(payload.length - 5))
    assertPassthrough(payload.take(Magic.length + 16))
  }

  test("Given a correctly digested but truncated or garbage message, when deaggregated, then it passes through") {
    val message = encodeMessage(Seq("k"), Nil, Seq(Entry(0, None, bytes("one"))))
    assertPassthrough(frame(message.take(message.length - 2)))
    assertPassthrough(frame(Array[Byte](-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)))
  }

  test("Given only the magic bytes, or the magic and a digest of nothing, when deaggregated, then they pass through") {
    assertPassthrough(Magic.clone())
    assertPassthrough(frame(Array.emptyByteArray))
  }

  test("Given an aggregate with key tables but zero records, when deaggregated, then it passes through") {
    assertPassthrough(frame(encodeMessage(Seq("k"), Seq("1"), Nil)))
  }

  test("Given a record whose key index is out of range, when deaggregated, then the whole payload passes through") {
    val secondOutOfRange = Seq(Entry(0, None, bytes("ok")), Entry(1, None, bytes("bad")))
    assertPassthrough(frame(encodeMessage(Seq("k"), Nil, secondOutOfRange)))
    assertPassthrough(frame(encodeMessage(Seq("k"), Seq("5"), Seq(Entry(0, Some(1), bytes("bad"))))))
    // 2^64 - 1 as a uint64: negative as a Long, and must not be mistaken for "no explicit hash key"
    assertPassthrough(frame(encodeMessage(Seq("k"), Nil, Seq(Entry(0, Some(-1L), bytes("bad"))))))
  }

  test("Given a record missing its required data field, when deaggregated, then it passes through") {
    // AggregatedRecord { partition_key_table: "k", records: Record { partition_key_index: 0 } }
    assertPassthrough(frame(Array[Byte](0x0a, 0x01, 'k'.toByte, 0x1a, 0x02, 0x08, 0x00)))
  }

  test("Given a record with an explicit hash key, when hashed, then the explicit hash key is the hash key") {
    val record = UserRecord(Array.emptyByteArray, "a", Some("340282366920938463463374607431768211455"), 0L)
    KplDeaggregator.hashKey(record) shouldBe (BigInt(1) << 128) - 1
  }

  test("Given a record without an explicit hash key, when hashed, then it is the unsigned MD5 of the partition key") {
    // MD5("a") = 0cc175b9c0f1b6a831c399e269772661; MD5("abc") = 900150983cd24fb0... has its top bit set
    KplDeaggregator.hashKey(UserRecord(Array.emptyByteArray, "a", None, 0L)) shouldBe
      BigInt("0cc175b9c0f1b6a831c399e269772661", 16)
    KplDeaggregator.hashKey(UserRecord(Array.emptyByteArray, "abc", None, 0L)) shouldBe
      BigInt("900150983cd24fb0d6963f7d28e17f72", 16)
  }

  test("Given an explicit hash key that is not a 128-bit decimal, when hashed, then the partition key MD5 is used") {
    val md5OfA = BigInt("0cc175b9c0f1b6a831c399e269772661", 16)
    Seq("not-a-number", "-1", (BigInt(1) << 128).toString, "").foreach { invalid =>
      KplDeaggregator.hashKey(UserRecord(Array.emptyByteArray, "a", Some(invalid), 0L)) shouldBe md5OfA
    }
  }
}
