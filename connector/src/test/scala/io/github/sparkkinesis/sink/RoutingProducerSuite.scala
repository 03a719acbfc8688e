package io.github.sparkkinesis.sink

import java.net.URI

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{Backoff, ClientSettings, FakeKinesisClient, ManualClock, RetrySettings}

class RoutingProducerSuite extends AnyFunSuite with Matchers {

  /** Records over 10 bytes (partition key and data) are large. */
  private final class Routes(strictKeyOrder: Boolean = false) {
    val small = new FakeRecordProducer
    val large = new FakeRecordProducer
    val producer = new RoutingProducer(small, large, smallMaxBytes = 10, strictKeyOrder)
    val results: mutable.Buffer[(String, SendResult)] = mutable.Buffer.empty

    def send(key: String, data: String): Unit =
      producer.send(
        OutgoingRecord("s", key, None, data.getBytes("UTF-8")),
        result => results.synchronized(results += ((data, result))))
  }

  private def payloads(p: FakeRecordProducer): Seq[String] = p.sent.map(r => new String(r.data, "UTF-8")).toVector

  test("Given small and large records of one partition key, when they are sent, then each goes out only after " +
    "every earlier record of its key that took the other way is confirmed, and other keys do not wait") {
    // Given a small record of key k in flight through the KPL
    val routes = new Routes
    routes.send("k", "s1")
    // When a large record, a small one behind it, and a small one of another key are sent
    routes.send("k", "L2-large-record")
    routes.send("k", "s3")
    routes.send("j", "j1")
    // Then only the other key's record joins the KPL: the large one waits for s1, and s3 waits behind it
    payloads(routes.small) shouldBe Seq("s1", "j1")
    routes.large.sent shouldBe empty
    routes.producer.heldBack shouldBe 2
    // And once s1 is confirmed, the large record goes out through PutRecord, alone
    routes.small.settleNext(SendResult.Written(1))
    payloads(routes.large) shouldBe Seq("L2-large-record")
    payloads(routes.small) shouldBe Seq("s1", "j1")
    // And once the large record is confirmed, s3 follows it through the KPL
    routes.small.settleNext(SendResult.Written(1)) // j1: changes nothing for k
    payloads(routes.small) shouldBe Seq("s1", "j1")
    routes.large.settleNext(SendResult.Written(1))
    payloads(routes.small) shouldBe Seq("s1", "j1", "s3")
    routes.small.confirmAll()
    routes.results.map(_._1) shouldBe Seq("s1", "j1", "L2-large-record", "s3")
    routes.results.map(_._2).distinct shouldBe Seq(SendResult.Written(1))
    routes.producer.heldBack shouldBe 0
  }

  test("Given the default order, when small records of one key are sent, then they all go to the KPL at once, " +
    "so a retry inside it can reorder them") {
    val routes = new Routes
    routes.send("k", "a1")
    routes.send("k", "a2")
    payloads(routes.small) shouldBe Seq("a1", "a2")
    routes.producer.heldBack shouldBe 0
  }

  test("Given strict key order, when small records of one key are sent, then each goes to the KPL only once the " +
    "one before it is confirmed or failed, and other keys do not wait") {
    // Given strict key order and a small record of key k in flight
    val routes = new Routes(strictKeyOrder = true)
    routes.send("k", "a1")
    // When two more records of k and one of another key are sent
    routes.send("k", "a2")
    routes.send("k", "a3")
    routes.send("j", "j1")
    // Then only the other key's record joins the KPL, whatever the KPL would retry
    payloads(routes.small) shouldBe Seq("a1", "j1")
    routes.producer.heldBack shouldBe 2
    // And a2 goes once a1 is confirmed, a3 once a2 has failed (its task fails; Spark writes its rows again)
    routes.small.settleNext(SendResult.Written(1))
    payloads(routes.small) shouldBe Seq("a1", "j1", "a2")
    routes.small.settleNext(SendResult.Written(1)) // j1: changes nothing for k
    payloads(routes.small) shouldBe Seq("a1", "j1", "a2")
    routes.small.settleNext(SendResult.Failed("throttled for too long"))
    payloads(routes.small) shouldBe Seq("a1", "j1", "a2", "a3")
    routes.small.confirmAll()
    routes.results.map(_._1) shouldBe Seq("a1", "j1", "a2", "a3")
    routes.results.map(_._2) shouldBe
      Seq(
        SendResult.Written(1),
        SendResult.Written(1),
        SendResult.Failed("throttled for too long"),
        SendResult.Written(1))
    routes.producer.heldBack shouldBe 0
  }

  test("Given two large records of one key, when they are sent, then the second waits for the first") {
    val routes = new Routes
    routes.send("k", "large-one-000")
    routes.send("k", "large-two-000")
    payloads(routes.large) shouldBe Seq("large-one-000")
    routes.large.settleNext(SendResult.Written(1))
    payloads(routes.large) shouldBe Seq("large-one-000", "large-two-000")
  }

  test("Given small records only, when they are sent, then they all go to the KPL at once, nothing held back") {
    val routes = new Routes
    (1 to 5).foreach(i => routes.send("k", s"s$i"))
    payloads(routes.small) shouldBe (1 to 5).map(i => s"s$i")
    routes.producer.heldBack shouldBe 0
  }

  test("Given a held-back record its producer then refuses, when its turn comes, then it fails through onDone " +
    "and the records behind it go on") {
    // Given a large record in flight and two small ones of its key waiting behind it, the first refused by the KPL
    val routes = new Routes
    routes.send("k", "large-record-0")
    routes.send("k", "bad")
    routes.send("k", "ok")
    routes.small.refuse =
      r => if (new String(r.data, "UTF-8") == "bad") Some(new IllegalArgumentException("no")) else None
    // When the large record is confirmed
    routes.large.settleNext(SendResult.Written(1))
    // Then the refused one is reported failed, naming the stream, and the next goes to the KPL
    routes.results.map(_._1) shouldBe Seq("large-record-0", "bad")
    routes.results(1)._2 match {
      case SendResult.Failed(reason) =>
        reason should (include("stream 's'") and include("IllegalArgumentException: no"))
      case other => fail(s"expected a failure, got $other")
    }
    payloads(routes.small) shouldBe Seq("ok")
  }

  test("Given a record its producer refuses at once, when it is sent, then the caller gets the exception") {
    val routes = new Routes
    routes.small.refuse = _ => Some(new IllegalArgumentException("Invalid key"))
    an[IllegalArgumentException] should be thrownBy routes.send("k", "s1")
    routes.small.refuse = _ => None
    routes.send("k", "large-record-0")
    payloads(routes.large) shouldBe Seq("large-record-0") // nothing of k was left in flight
  }

  test("Given a task writing small, 2 MiB and small rows of one key, when it commits, then the commit waits for " +
    "all three, the large row went by PutRecord after the first was confirmed, and the last after the large one") {
    // Given a stream raised to 10 MiB, and an executor whose producer routes rows over 1 MiB to PutRecord
    val fake = new FakeKinesisClient(new ManualClock())
    fake.createStream("s", 1)
    fake.updateMaxRecordSize("s", 10240)
    val small = new FakeRecordProducer
    val large = new PutRecordProducer(() => fake, 30000L, () => new Backoff(1, 2), threads = 2)
    val pool = new ProducerPool(_ => new RoutingProducer(small, large, RoutingProducer.KplMaxRecordBytes))
    val client = ClientSettings(
      Some("eu-west-1"),
      Some(URI.create("https://127.0.0.1:1")),
      None,
      RetrySettings(3, 500, 10000),
      verifyCertificate = false)
    val settings = ProducerSettings(
      client,
      100,
      1,
      aggregationEnabled = true,
      recordTtlMs = 30000,
      maxPendingRecords = 1000,
      maxPendingBytes = 64L << 20)
    val writer = new KinesisDataWriter(
      SinkColumns(0, dataIsBinary = true, 1, None, None, Some("s")),
      pool.acquire(settings),
      WriterLimits(10000L, 1000, 64L << 20),
      _ => 10L << 20)
    def row(label: String, n: Int) = new GenericInternalRow(Array[Any](
      label.getBytes("UTF-8") ++ Array.fill(n)(0.toByte),
      UTF8String.fromString("k")))
    // When it writes them and commits
    Seq(row("s1", 0), row("L2", 2 << 20), row("s3", 0)).foreach(writer.write)
    @volatile var committed: Option[KinesisWriterCommitMessage] = None
    val committing = new Thread(new Runnable {
      override def run(): Unit = committed = Some(writer.commit().asInstanceOf[KinesisWriterCommitMessage])
    })
    committing.start()
    // Then the large row waits for s1; once s1 is confirmed it is put, and s3 follows only after it is stored
    payloads(small) shouldBe Seq("s1")
    fake.recordsOf("s") shouldBe empty
    small.settleNext(SendResult.Written(1))
    val deadline = System.nanoTime() + 10000000000L
    while (small.synchronized(small.sent.size) < 2 && System.nanoTime() < deadline) Thread.`yield`()
    fake.recordsOf("s").map(r => new String(r.data.take(2), "UTF-8")) shouldBe Seq("L2")
    payloads(small) shouldBe Seq("s1", "s3")
    committed shouldBe None
    // And the commit returns once s3 is confirmed too, counting all three rows
    small.settleNext(SendResult.Written(1))
    committing.join(10000L)
    committed.map(_.records) shouldBe Some(3)
    writer.close()
    large.destroy()
  }
}
