package io.github.sparkkinesis.sink

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{
  AccessException,
  Backoff,
  KinesisClientException,
  PutEntry,
  PutOutcome,
  RequestRefusedException,
  ResourceMissingException,
  SinkClient,
  ThrottledException
}

class PutRecordsProducerSuite extends AnyFunSuite with Matchers {

  /** One PutRecords call as the client saw it: its stream, its entries' data (as text) and when it was made. */
  private final case class Call(stream: String, data: Seq[String], atMs: Long)

  /** A SinkClient whose PutRecords answers `answer(callNumber, entries)` (from 1), recording every call. */
  private final class ScriptedClient(answer: (Int, Seq[PutEntry]) => Seq[PutOutcome]) extends SinkClient {
    val calls = mutable.Buffer.empty[Call] // guarded by this

    override def writeRecords(streamName: String, entries: Seq[PutEntry]): Seq[PutOutcome] = {
      val n = synchronized {
        calls += Call(streamName, entries.map(e => new String(e.data, UTF_8)), System.nanoTime() / 1000000L)
        calls.size
      }
      answer(n, entries)
    }

    def made: Seq[Call] = synchronized(calls.toVector)

    override def maxRecordSizeInKiB(streamName: String): Option[Int] = None
    override def writeRecord(stream: String, key: String, hashKey: Option[String], data: Array[Byte]): String =
      fail("the PutRecords producer made a PutRecord call")
  }

  private def text(e: PutEntry): String = new String(e.data, UTF_8)

  private def storeAll(n: Int, entries: Seq[PutEntry]): Seq[PutOutcome] =
    entries.indices.map(i => PutOutcome.Stored(s"$n-$i"))

  private val throttledEntry = PutOutcome.Refused("ProvisionedThroughputExceededException", "Rate exceeded for shard")

  /** A producer over `client` and the results of the records sent through it, by their data. */
  private final class Setup(
      client: SinkClient,
      lanes: Int = 4,
      maxBufferedMs: Long = 500L, // records sent back to back go in one call, however slow the test's thread
      recordTtlMs: Long = 30000L) {
    val producer = new PutRecordsProducer(() => client, lanes, maxBufferedMs, recordTtlMs, () => new Backoff(1, 5))
    private val results = new LinkedBlockingQueue[(String, SendResult)]()

    def send(data: String, key: String = "k", stream: String = "orders", bytes: Int = 0): Unit = {
      val payload = data.getBytes(UTF_8) ++ Array.fill(bytes)('x'.toByte)
      producer.send(OutgoingRecord(stream, key, None, payload), r => results.put((data, r)))
    }

    /** The results of the next `n` records, by data; fails after 10 s. */
    def await(n: Int): Map[String, SendResult] = (1 to n).map { _ =>
      Option(results.poll(10, TimeUnit.SECONDS)).getOrElse(fail(s"fewer than $n results within 10 s"))
    }.toMap
  }

  test("Given 1,200 small records of one stream, when they are sent, then they go in calls of at most 500, in order") {
    // Given
    val client = new ScriptedClient(storeAll)
    val setup = new Setup(client, lanes = 1, maxBufferedMs = 2000L) // full calls go at once, the rest after 2 s

    // When
    (0 until 1200).foreach(i => setup.send(s"r$i", key = s"key-${i % 7}"))
    val results = setup.await(1200)

    // Then
    results.values.toSet shouldBe Set(SendResult.Written(1))
    client.made.map(_.data.size) shouldBe Seq(500, 500, 200)
    client.made.flatMap(_.data) shouldBe (0 until 1200).map(i => s"r$i")
    setup.producer.outstandingRecords shouldBe 0L
    setup.producer.destroy()
  }

  test("Given records of 300 KiB, when they are sent, then no call carries more than 5 MiB") {
    val client = new ScriptedClient(storeAll)
    val setup = new Setup(client, lanes = 1, maxBufferedMs = 1000L) // calls go when full, not when a record waited
    (0 until 40).foreach(i => setup.send(s"r$i", bytes = 300 * 1024))
    setup.await(40).values.toSet shouldBe Set(SendResult.Written(1))
    client.made.map(_.data.size) shouldBe Seq(17, 17, 6) // 5 MiB / (300 KiB and a little) = 17
    client.made.flatMap(_.data).size shouldBe 40
    setup.producer.destroy()
  }

  test("Given a few records, when they are sent, then their call waits kinesis.sink.recordMaxBufferedTime for more") {
    val client = new ScriptedClient(storeAll)
    val setup = new Setup(client, lanes = 1, maxBufferedMs = 300L)
    val sentAt = System.nanoTime() / 1000000L // the producer's clock
    (0 until 3).foreach(i => setup.send(s"r$i"))
    setup.await(3)
    client.made.map(_.data) shouldBe Seq(Seq("r0", "r1", "r2"))
    client.made.head.atMs - sentAt should be >= 300L
    setup.producer.destroy()
  }

  test("Given an entry Kinesis refuses once, when records are sent, then it goes again first, and all are written") {
    // Given: the first call refuses its second entry (its shard throttled); records keep coming meanwhile
    val client = new ScriptedClient((n, entries) =>
      if (n == 1) entries.map(e => if (text(e) == "a1") throttledEntry else PutOutcome.Stored(s"1-${text(e)}"))
      else storeAll(n, entries))
    val setup = new Setup(client, lanes = 1)

    // When
    (0 until 3).foreach(i => setup.send(s"a$i"))
    val first = setup.await(2)
    (0 until 3).foreach(i => setup.send(s"b$i"))
    val rest = setup.await(4)

    // Then
    first shouldBe Map("a0" -> SendResult.Written(1), "a2" -> SendResult.Written(1))
    rest("a1") shouldBe SendResult.Written(2)
    client.made.head.data shouldBe Seq("a0", "a1", "a2")
    client.made(1).data.head shouldBe "a1"
    client.made.flatMap(_.data).sorted shouldBe Seq("a0", "a1", "a1", "a2", "b0", "b1", "b2")
    setup.producer.destroy()
  }

  test("Given an entry refused past its TTL, when it is sent, then it fails naming the TTL, the stream, the error") {
    val client = new ScriptedClient((_, entries) => entries.map(_ => throttledEntry))
    val setup = new Setup(client, lanes = 1, maxBufferedMs = 0L, recordTtlMs = 300L)
    setup.send("r0")
    setup.await(1)("r0") match {
      case SendResult.Failed(reason) => reason should (include("stream 'orders'") and
          include("kinesis.sink.recordTtl (300 ms)") and include("ProvisionedThroughputExceededException") and
          include("at least once"))
      case other => fail(s"expected a failure, got $other")
    }
    client.made.size should be > 1
    setup.producer.outstandingRecords shouldBe 0L
    setup.producer.destroy()
  }

  test("Given a whole call throttled or failing for a passing reason, when records are sent, then they go again") {
    val client = new ScriptedClient((n, entries) =>
      n match {
        case 1 => throw new ThrottledException("Rate exceeded for stream orders (injected)")
        case 2 => throw new KinesisClientException("Connection reset (injected)")
        case _ => storeAll(n, entries)
      })
    val setup = new Setup(client, lanes = 1)
    (0 until 3).foreach(i => setup.send(s"r$i"))
    setup.await(3).values.toSet shouldBe Set(SendResult.Written(3))
    client.made.map(_.data) shouldBe Seq.fill(3)(Seq("r0", "r1", "r2"))
    setup.producer.destroy()
  }

  test("Given a call Kinesis refuses for good (permission, stream, the request itself), when records are sent, then " +
    "they fail at once with the reason") {
    val refusals = Seq(
      new AccessException("Access denied to kinesis:PutRecords on stream orders (injected)"),
      new ResourceMissingException("Stream orders does not exist (injected)"),
      new RequestRefusedException("PutRecords on stream orders failed (KMSDisabledException, HTTP 400) (injected)"))
    refusals.foreach { refusal =>
      val client = new ScriptedClient((_, _) => throw refusal)
      val setup = new Setup(client, lanes = 1)
      (0 until 2).foreach(i => setup.send(s"r$i"))
      setup.await(2).values.foreach {
        case SendResult.Failed(reason) =>
          reason should (include("stream 'orders'") and include(refusal.getMessage) and include("PutRecords"))
        case other => fail(s"expected a failure, got $other")
      }
      client.made.size shouldBe 1
      setup.producer.destroy()
    }
  }

  test("Given a lane busy past the TTL of records queued behind it, when it is free, then they fail unsent") {
    // Given a first call that Kinesis takes 600 ms to answer, and a TTL of 300 ms
    val inCall = new java.util.concurrent.CountDownLatch(1)
    val client = new ScriptedClient((n, entries) => {
      if (n == 1) {
        inCall.countDown()
        Thread.sleep(600)
      }
      storeAll(n, entries)
    })
    val setup = new Setup(client, lanes = 1, maxBufferedMs = 0L, recordTtlMs = 300L)

    // When a record goes out, and another is handed over while its call is under way
    setup.send("first")
    inCall.await(10, TimeUnit.SECONDS) shouldBe true
    setup.send("late")
    val results = setup.await(2)

    // Then the first is written, the second fails naming the TTL, and was never sent
    results("first") shouldBe SendResult.Written(1)
    results("late") match {
      case SendResult.Failed(reason) => reason should include("kinesis.sink.recordTtl (300 ms), after 0 attempt(s)")
      case other => fail(s"expected a failure, got $other")
    }
    client.made.flatMap(_.data) shouldBe Seq("first")
    setup.producer.destroy()
  }

  test("Given a stream that keeps its lane busy, when a record of another stream waits, then it goes before the " +
    "busy stream's later records") {
    // Given a lane whose calls take 20 ms each, and 2,000 records of stream "busy" handed over
    val client = new ScriptedClient((n, entries) => {
      Thread.sleep(20)
      storeAll(n, entries)
    })
    val setup = new Setup(client, lanes = 1, maxBufferedMs = 0L)
    (0 until 2000).foreach(i => setup.send(s"busy-$i", stream = "busy"))

    // When one record of stream "quiet" is handed over, then 2,000 more of "busy"
    setup.send("quiet-0", stream = "quiet")
    (2000 until 4000).foreach(i => setup.send(s"busy-$i", stream = "busy"))
    setup.await(4001).values.toSet shouldBe Set(SendResult.Written(1))

    // Then the quiet stream's call came before the busy stream's last (it was not left to wait for all of them)
    val calls = client.made
    calls.indexWhere(_.stream == "quiet") should be < calls.lastIndexWhere(_.data.contains("busy-3999"))
    setup.producer.destroy()
  }

  test("Given a lane's thread that fails on a defect, when records are sent, then they fail and the producer takes " +
    "no more") {
    val client = new ScriptedClient((_, _) => throw new NoClassDefFoundError("shaded/software/amazon/Missing"))
    val setup = new Setup(client, lanes = 1)
    setup.send("r0")
    setup.await(1)("r0") match {
      case SendResult.Failed(reason) => reason should (include("the producer failed") and include("Missing"))
      case other => fail(s"expected a failure, got $other")
    }
    the[IllegalStateException] thrownBy setup.send("r1") should have message
      "The sink's PutRecords producer failed and takes no more rows: java.lang.NoClassDefFoundError: " +
      "shaded/software/amazon/Missing"
  }

  test("a TTL beyond the clock's range never expires; within it, the deadline is the TTL after the hand-over") {
    SinkFailures.deadline(1000L, Long.MaxValue) shouldBe Long.MaxValue
    SinkFailures.deadline(-1000L, Long.MaxValue) shouldBe Long.MaxValue - 1000L
    SinkFailures.deadline(1000L, 30000L) shouldBe 31000L
  }

  test("Given many keys on several lanes, when records are sent, then each key's records go out in order") {
    // Given
    val client = new ScriptedClient(storeAll)
    val setup = new Setup(client, lanes = 4, maxBufferedMs = 5L)

    // When: 20 keys, 100 records each, handed over interleaved, into two streams
    for (i <- 0 until 100; k <- 0 until 20) setup.send(s"$k:$i", key = s"key-$k", stream = s"s${k % 2}")
    setup.await(2000).values.toSet shouldBe Set(SendResult.Written(1))

    // Then
    val sent = client.made.flatMap(_.data).map(_.split(':')).map(a => (a(0).toInt, a(1).toInt))
    sent.groupBy(_._1).values.foreach(ofKey => ofKey.map(_._2) shouldBe (0 until 100))
    client.made.foreach(call => call.data.map(_.split(':')(0).toInt % 2).toSet shouldBe Set(call.stream.last - '0'))
    setup.producer.destroy()
  }

  test("Given a stopped producer, when a record is sent, then it is refused with a message") {
    val setup = new Setup(new ScriptedClient(storeAll))
    setup.producer.destroy()
    the[IllegalStateException] thrownBy setup.send("r0") should have message
      "The sink's PutRecords producer was stopped: it takes no more rows."
  }
}
