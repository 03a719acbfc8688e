package io.github.sparkkinesis.sink

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class KinesisDataWriterSuite extends AnyFunSuite with Matchers {

  /** Columns: data (string), partitionKey, streamName; default stream "default". */
  private val columns = SinkColumns(data = 0, dataIsBinary = false, partitionKey = 1, explicitHashKey = None,
    streamName = Some(2), defaultStream = Some("default"))

  private def row(data: String, key: String, stream: String = null): InternalRow =
    new GenericInternalRow(Array[Any](UTF8String.fromString(data), UTF8String.fromString(key),
      Option(stream).map(UTF8String.fromString).orNull))

  private final class Fixture(maxPending: Int = 1000, confirmTimeoutMs: Long = 10000L) {
    val producer = new FakeRecordProducer
    val checkedStreams: mutable.Buffer[String] = mutable.Buffer.empty
    @volatile var brokenReported = false
    val writer = new KinesisDataWriter(columns, producer,
      WriterLimits(flushWaitTimeMs = 10L, confirmTimeoutMs = confirmTimeoutMs, maxPendingRecords = maxPending,
        maxPendingBytes = 1L << 20),
      checkStream = s => checkedStreams.synchronized(checkedStreams += s),
      onProducerBroken = () => brokenReported = true)
  }

  test("commit returns once every record is confirmed, with what the task wrote") {
    // Given a producer that confirms what it holds when flushed
    val f = new Fixture
    f.producer.confirmOnFlush = true
    // When three rows are written and the task commits
    Seq(row("a", "k1"), row("bb", "k2"), row("ccc", "k3", "other")).foreach(f.writer.write)
    val message = f.writer.commit()
    // Then the commit reports them, and each went to its stream
    message shouldBe KinesisWriterCommitMessage(records = 3, bytes = 6)
    f.producer.sent.map(r => (r.stream, r.partitionKey)) shouldBe Seq(("default", "k1"), ("default", "k2"), ("other", "k3"))
    f.producer.pendingCount shouldBe 0
  }

  test("a record that fails for good fails the commit with the producer's explanation") {
    // Given two rows handed to the producer
    val f = new Fixture
    f.writer.write(row("a", "k1"))
    f.writer.write(row("b", "k2"))
    // When one is written and the other fails
    f.producer.settleNext(SendResult.Written)
    f.producer.settleNext(SendResult.Failed("stream 'default' is gone"))
    // Then the commit fails with that reason, and so does any further write
    the[KinesisSinkException] thrownBy f.writer.commit() should have message "stream 'default' is gone"
    the[KinesisSinkException] thrownBy f.writer.write(row("c", "k3")) should have message "stream 'default' is gone"
  }

  test("commit fails, naming how many rows are unconfirmed, when the producer never answers") {
    val f = new Fixture(confirmTimeoutMs = 200L)
    f.writer.write(row("a", "k1"))
    val e = the[IllegalStateException] thrownBy f.writer.commit()
    e.getMessage should (include("200 ms") and include("1 still unconfirmed"))
    f.producer.flushes should be > 1
  }

  test("write blocks while the task has its maximum of unconfirmed records, and goes on when one is confirmed") {
    // Given a writer that allows two unconfirmed records, holding two
    val f = new Fixture(maxPending = 2)
    f.writer.write(row("a", "k1"))
    f.writer.write(row("b", "k2"))
    // When a third row is written on another thread
    val third = new Thread(new Runnable { override def run(): Unit = f.writer.write(row("c", "k3")) })
    third.start()
    // Then it waits without handing the row over
    val deadline = System.nanoTime() + 10000000000L
    while (third.getState != Thread.State.TIMED_WAITING && System.nanoTime() < deadline) Thread.`yield`()
    third.getState shouldBe Thread.State.TIMED_WAITING
    f.producer.sent.size shouldBe 2
    // And once a record is confirmed, the row goes through
    f.producer.settleNext(SendResult.Written)
    third.join(10000L)
    third.isAlive shouldBe false
    f.producer.sent.map(_.data.toSeq) shouldBe Seq("a", "b", "c").map(_.getBytes("UTF-8").toSeq)
  }

  test("each stream is checked once per task, before its first row is handed over") {
    val f = new Fixture
    Seq(row("a", "k"), row("b", "k", "s2"), row("c", "k"), row("d", "k", "s2")).foreach(f.writer.write)
    f.checkedStreams shouldBe Seq("default", "s2")
  }

  test("a producer that refuses records is reported broken, and the task fails naming the stream") {
    val f = new Fixture
    f.producer.refuseWith = Some(new IllegalStateException("daemon died"))
    val e = the[IllegalStateException] thrownBy f.writer.write(row("a", "k1"))
    e.getMessage should (include("'default'") and include("daemon died") and include("retries"))
    f.brokenReported shouldBe true
  }
}
