package io.github.sparkkinesis.client

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The fake must answer as Kinesis does (AWS, and kinesis-mock as described in EMULATORS.md). */
class FakeKinesisClientSuite extends AnyFunSuite with Matchers {

  private val MaxHashKey = BigInt(2).pow(128) - 1

  private def bytes(s: String) = s.getBytes(UTF_8)
  private def texts(batch: RecordBatch) = batch.records.map(r => new String(r.data, UTF_8))

  private def withStream(shards: Int)(body: (FakeKinesisClient, ManualClock) => Unit): Unit = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", shards)
    body(fake, clock)
  }

  test("a new stream has open shards with AWS-style ids splitting the hash key space evenly") {
    withStream(3) { (fake, _) =>
      // When
      val shards = fake.listShards("s")

      // Then
      shards.map(_.shardId) shouldBe Seq("shardId-000000000000", "shardId-000000000001", "shardId-000000000002")
      shards.head.hashKeyRange.startingHashKey shouldBe 0
      shards.last.hashKeyRange.endingHashKey shouldBe MaxHashKey
      shards.sliding(2).foreach { case Seq(a, b) =>
        b.hashKeyRange.startingHashKey shouldBe a.hashKeyRange.endingHashKey + 1
      }
      shards.foreach { s => s.parents shouldBe empty; s.isClosed shouldBe false }
    }
  }

  test("records read back in order with 56-digit increasing sequence numbers, clock arrival times and lag") {
    withStream(1) { (fake, clock) =>
      // Given three records put one second apart
      val seqs = Seq("a", "b", "c").map { v =>
        clock.advance(1000); fake.putRecordToShard("s", "shardId-000000000000", bytes(v))
      }

      // When they are read two at a time from TRIM_HORIZON
      val first = fake.getRecords("s", fake.shardIterator("s", "shardId-000000000000", IteratorStart.TrimHorizon), 2)
      val second = fake.getRecords("s", first.nextIterator.get, 2)

      // Then
      texts(first) shouldBe Seq("a", "b")
      texts(second) shouldBe Seq("c")
      (first.records ++ second.records).map(_.sequenceNumber) shouldBe seqs
      seqs.foreach(_.length shouldBe 56)
      seqs.map(BigInt(_)) shouldBe sorted
      first.records.head.approximateArrivalTimestampMillis shouldBe clock() - 2000
      first.millisBehindLatest shouldBe 1000L // age of "b", the last record returned
      second.millisBehindLatest shouldBe 0L
      second.nextIterator shouldBe defined // an open shard never ends
      fake.getRecords("s", second.nextIterator.get, 10).records shouldBe empty
    }
  }

  test("all five iterator starts, and the starts Kinesis refuses") {
    withStream(1) { (fake, clock) =>
      // Given
      val shard = "shardId-000000000000"
      val seqs = Seq("a", "b", "c").map { v => clock.advance(10); fake.putRecordToShard("s", shard, bytes(v)) }
      def read(start: IteratorStart) = texts(fake.getRecords("s", fake.shardIterator("s", shard, start), 100))

      // When / Then
      read(IteratorStart.TrimHorizon) shouldBe Seq("a", "b", "c")
      read(IteratorStart.Latest) shouldBe empty
      read(IteratorStart.AtSequenceNumber(seqs(1))) shouldBe Seq("b", "c")
      read(IteratorStart.AfterSequenceNumber(seqs(1))) shouldBe Seq("c")
      read(IteratorStart.AtTimestamp(clock() - 5)) shouldBe Seq("c") // between "b" and "c": the next later record
      a[KinesisClientException] should be thrownBy fake.shardIterator(
        "s",
        shard,
        IteratorStart.AtTimestamp(clock() + 1))
      a[KinesisClientException] should be thrownBy fake.shardIterator("s", shard, IteratorStart.AtSequenceNumber("12"))
      a[KinesisClientException] should be thrownBy fake.shardIterator(
        "s",
        shard,
        IteratorStart.AfterSequenceNumber("x"))
    }
  }

  test("a split closes the parent; reading it to its end yields no next iterator and the children") {
    withStream(1) { (fake, _) =>
      // Given a shard with two records, split in the middle
      val parent = "shardId-000000000000"
      val seqs = Seq("a", "b").map(v => fake.putRecordToShard("s", parent, bytes(v)))
      val (left, right) = fake.splitShard("s", parent, BigInt(2).pow(127))
      val (owner, _) = fake.putRecord("s", "k", bytes("new"), explicitHashKey = Some(BigInt(2).pow(127)))

      // When the parent is read from the start, and from LATEST
      val all = fake.getRecords("s", fake.shardIterator("s", parent, IteratorStart.TrimHorizon), 100)
      val latest = fake.getRecords("s", fake.shardIterator("s", parent, IteratorStart.Latest), 100)

      // Then
      val shards = fake.listShards("s").map(s => s.shardId -> s).toMap
      shards(parent).isClosed shouldBe true
      BigInt(shards(parent).endingSequenceNumber.get) should be > BigInt(seqs.last)
      shards(left).parentShardId shouldBe Some(parent)
      shards(left).hashKeyRange shouldBe HashKeyRange(0, BigInt(2).pow(127) - 1)
      shards(right).hashKeyRange shouldBe HashKeyRange(BigInt(2).pow(127), MaxHashKey)
      owner shouldBe right // new records go to the children
      texts(all) shouldBe Seq("a", "b")
      all.nextIterator shouldBe None
      all.childShardIds shouldBe Seq(left, right)
      latest.records shouldBe empty
      latest.nextIterator shouldBe None
    }
  }

  test("a merge closes both parents and makes one child owning both ranges") {
    withStream(2) { (fake, _) =>
      // When
      val child = fake.mergeShards("s", "shardId-000000000001", "shardId-000000000000")

      // Then
      val c = fake.listShards("s").find(_.shardId == child).get
      c.parentShardId shouldBe Some("shardId-000000000001")
      c.adjacentParentShardId shouldBe Some("shardId-000000000000")
      c.hashKeyRange shouldBe HashKeyRange(0, MaxHashKey)
      fake.listShards("s").filter(_.isClosed).map(_.shardId) shouldBe Seq(
        "shardId-000000000000",
        "shardId-000000000001")
    }
  }

  test("iterators can be used again until they expire, after five minutes of clock time, or on demand") {
    withStream(1) { (fake, clock) =>
      // Given
      val sequence = fake.putRecordToShard("s", "shardId-000000000000", Array[Byte](1))
      val it = fake.shardIterator("s", "shardId-000000000000", IteratorStart.TrimHorizon)

      // When / Then
      fake.getRecords("s", it, 1).records.map(_.sequenceNumber) shouldBe Seq(sequence) // a call does not use it up
      fake.expireNextIterator()
      an[ExpiredIteratorException] should be thrownBy fake.getRecords("s", it, 10)
      fake.getRecords("s", it, 10).records.map(_.sequenceNumber) shouldBe Seq(sequence) // only the next call failed
      clock.advance(5 * 60 * 1000L + 1)
      an[ExpiredIteratorException] should be thrownBy fake.getRecords("s", it, 10)
    }
  }

  test("injected throttling and failures hit the next calls, and every call is counted") {
    withStream(1) { (fake, _) =>
      // Given
      val it = fake.shardIterator("s", "shardId-000000000000", IteratorStart.TrimHorizon)
      fake.throttleNextGetRecords(2)
      val boom = new AccessException("denied")

      // When / Then
      a[ThrottledException] should be thrownBy fake.getRecords("s", it, 10)
      a[ThrottledException] should be thrownBy fake.getRecords("s", it, 10)
      fake.getRecords("s", it, 10).records shouldBe empty
      fake.failNextCall(boom)
      (the[AccessException] thrownBy fake.listShards("s")) shouldBe theSameInstanceAs(boom)
      fake.listShards("s") should have size 1
      (fake.listShardsCalls, fake.shardIteratorCalls, fake.getRecordsCalls) shouldBe ((2, 1, 3))
    }
  }

  test("trimming moves TRIM_HORIZON and old iterators past expired records; a deleted shard is gone") {
    withStream(2) { (fake, _) =>
      // Given
      val shard = "shardId-000000000000"
      Seq("a", "b", "c").foreach(v => fake.putRecordToShard("s", shard, bytes(v)))
      val old = fake.shardIterator("s", shard, IteratorStart.TrimHorizon)

      // When
      fake.trimShard("s", shard, 2)
      fake.deleteShard("s", "shardId-000000000001")

      // Then
      texts(fake.getRecords("s", old, 10)) shouldBe Seq("c")
      texts(fake.getRecords("s", fake.shardIterator("s", shard, IteratorStart.TrimHorizon), 10)) shouldBe Seq("c")
      fake.listShards("s").map(_.shardId) shouldBe Seq(shard)
      a[ResourceMissingException] should be thrownBy
        fake.shardIterator("s", "shardId-000000000001", IteratorStart.TrimHorizon)
    }
  }

  test("unknown streams and shards are missing resources; foreign iterators and bad limits are refused") {
    withStream(1) { (fake, _) =>
      // Given
      val it = fake.shardIterator("s", "shardId-000000000000", IteratorStart.TrimHorizon)
      fake.createStream("other", 1)

      // When / Then
      a[ResourceMissingException] should be thrownBy fake.listShards("nope")
      a[ResourceMissingException] should be thrownBy fake.shardIterator(
        "s",
        "shardId-000000000009",
        IteratorStart.Latest)
      a[KinesisClientException] should be thrownBy fake.getRecords("s", "garbage", 10)
      a[KinesisClientException] should be thrownBy fake.getRecords("other", it, 10)
      a[KinesisClientException] should be thrownBy fake.getRecords("s", it, 0)
      fake.close()
      fake.isClosed shouldBe true
      an[IllegalStateException] should be thrownBy fake.listShards("s")
    }
  }
}
