package io.github.sparkkinesis.sink

import java.net.URI

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{ClientSettings, RetrySettings}
import io.github.sparkkinesis.metrics.WriteMetrics

class KinesisDataWriterSuite extends AnyFunSuite with Matchers with BlockingThreads {

  /** Columns: data (string), partitionKey, streamName; no kinesis.streamName, so each row names its stream. */
  private val columns = SinkColumns(
    data = 0,
    dataIsBinary = false,
    partitionKey = 1,
    explicitHashKey = None,
    streamName = Some(2),
    optionStream = None)

  private def row(data: String, key: String, stream: String = "s1"): InternalRow =
    new GenericInternalRow(Array[Any](
      UTF8String.fromString(data),
      UTF8String.fromString(key),
      UTF8String.fromString(stream)))

  private def settings(executorRecords: Int) = ProducerSettings(
    ClientSettings(
      Some("eu-west-1"),
      Some(URI.create("https://127.0.0.1:1")),
      None,
      RetrySettings(3, 500, 10000),
      verifyCertificate = false),
    recordMaxBufferedTimeMs = 100,
    maxConnections = 1,
    aggregationEnabled = true,
    recordTtlMs = 1000,
    maxPendingRecords = executorRecords,
    maxPendingBytes = 1L << 20)

  /** An executor: a pool whose producers are fakes, and the tasks' writers around it. */
  private final class Executor(executorRecords: Int = 1000) {
    val producers: mutable.Buffer[FakeRecordProducer] = mutable.Buffer.empty
    val pool = new ProducerPool(_ => producers.synchronized { producers += new FakeRecordProducer; producers.last })
    val checkedStreams: mutable.Buffer[String] = mutable.Buffer.empty

    /** Each stream's metrics, as the writers count them. */
    val metrics: mutable.Map[String, WriteMetrics] = mutable.Map.empty

    def writer(
        taskRecords: Int = 1000,
        confirmTimeoutMs: Long = 10000L,
        commitCounts: Boolean = true): KinesisDataWriter =
      new KinesisDataWriter(
        columns,
        pool.acquire(settings(executorRecords)),
        WriterLimits(confirmTimeoutMs = confirmTimeoutMs, maxPendingRecords = taskRecords, maxPendingBytes = 1L << 20),
        maxRecordBytes = s => checkedStreams.synchronized { checkedStreams += s; 1024L * 1024 },
        metrics = s => metrics.synchronized(metrics.getOrElseUpdate(s, WriteMetrics.detached)),
        commitCounts = commitCounts)

    def producer: FakeRecordProducer = producers.synchronized(producers.head)
  }

  test(
    "Given a write whose driver cannot load the connector, when rows are confirmed, then commit returns no message") {
    // Given a writer told that Spark's driver threads cannot load the connector's classes (session artifacts)
    val executor = new Executor
    val writer = executor.writer(commitCounts = false)
    Seq(row("a", "k1"), row("bb", "k2")).foreach(writer.write)
    // When the task commits and Kinesis confirms the rows
    @volatile var message: Option[AnyRef] = Some("not committed")
    val committing = blockedIn { message = Option(writer.commit()) }
    executor.producer.confirmAll()
    joined(committing)
    // Then it still waited for every row, and returns nothing of the connector's for the driver to deserialize
    message shouldBe None
    executor.producer.sent.map(_.partitionKey) shouldBe Seq("k1", "k2")
  }

  test("Given rows handed over, when Kinesis confirms them during commit, then commit returns what the task wrote") {
    // Given three rows handed to the producer
    val executor = new Executor
    val writer = executor.writer()
    Seq(row("a", "k1"), row("bb", "k2"), row("ccc", "k3", "other")).foreach(writer.write)
    // When the task commits, and Kinesis confirms the rows while it waits
    @volatile var message: Option[KinesisWriterCommitMessage] = None
    val committing = blockedIn { message = Some(writer.commit().asInstanceOf[KinesisWriterCommitMessage]) }
    executor.producer.confirmAll()
    joined(committing)
    // Then the commit reports them (partition keys and data count, as Kinesis counts them), each in its stream
    message shouldBe Some(KinesisWriterCommitMessage(records = 3, bytes = 12))
    executor.producer.sent.map(r => (r.stream, r.partitionKey)) shouldBe Seq(
      ("s1", "k1"),
      ("s1", "k2"),
      ("other", "k3"))
  }

  test("Given rows for two streams, when Kinesis confirms some (one after retries) and fails one, then each " +
    "stream's metrics count them, and rows outstanding go back to 0") {
    val executor = new Executor
    val writer = executor.writer()
    Seq(row("a", "k"), row("bb", "k"), row("ccc", "k"), row("d", "k", "other")).foreach(writer.write)
    executor.metrics("s1").rowsOutstanding.get shouldBe 3
    executor.metrics("other").rowsOutstanding.get shouldBe 1
    // Kinesis confirms the first, the second after 3 attempts, fails the third and confirms the fourth
    Seq(SendResult.Written(1), SendResult.Written(3), SendResult.Failed("throttled"), SendResult.Written(1))
      .foreach(executor.producer.settleNext)
    val s1 = executor.metrics("s1")
    (s1.rowsWritten.getCount, s1.bytesWritten.getCount, s1.rowsRetried.getCount, s1.rowsFailed.getCount) shouldBe
      (2L, "akbbk".length.toLong, 1L, 1L)
    s1.rowsOutstanding.get shouldBe 0
    (executor.metrics("other").rowsWritten.getCount, executor.metrics("other").rowsOutstanding.get) shouldBe (1L, 0L)
  }

  test("Given a record that fails for good, when the task commits, then it fails with the producer's explanation") {
    val executor = new Executor
    val writer = executor.writer()
    writer.write(row("a", "k1"))
    writer.write(row("b", "k2"))
    executor.producer.settleNext(SendResult.Written(1))
    executor.producer.settleNext(SendResult.Failed("stream 's1' is gone"))
    the[KinesisSinkException] thrownBy writer.commit() should have message "stream 's1' is gone"
    the[KinesisSinkException] thrownBy writer.write(row("c", "k3")) should have message "stream 's1' is gone"
  }

  test("Given a producer that never answers, when the task commits, then it fails naming the unconfirmed rows") {
    val writer = new Executor().writer(confirmTimeoutMs = 200L)
    writer.write(row("a", "k1"))
    (the[IllegalStateException] thrownBy writer.commit()).getMessage should
      (include("200 ms") and include("1 still unconfirmed"))
  }

  test("Given rows confirmed one by one, each within the confirmation wait but all of them in longer (rows held " +
    "back for strict key order), when the task commits, then it waits for every one and succeeds") {
    // Given four rows and a confirmation wait of 2 s
    val executor = new Executor
    val writer = executor.writer(confirmTimeoutMs = 2000L)
    (1 to 4).foreach(i => writer.write(row(s"r$i", "k")))
    // When the task commits and the producer confirms a row every 800 ms (3.2 s in all)
    @volatile var message: Option[KinesisWriterCommitMessage] = None
    val committing = blockedIn { message = Some(writer.commit().asInstanceOf[KinesisWriterCommitMessage]) }
    for (_ <- 1 to 4) {
      Thread.sleep(800) // the producer's pace, not synchronisation: the commit must outlast one wait
      executor.producer.settleNext(SendResult.Written(1))
    }
    joined(committing)
    // Then the commit reports all four rows
    message shouldBe Some(KinesisWriterCommitMessage(records = 4, bytes = 12))
  }

  test("Given kinesis.sink.recordTtl at or near Long.MaxValue, when a task commits, then it waits for its rows " +
    "instead of failing at once") {
    for (ttl <- Seq(Long.MaxValue, Long.MaxValue - KinesisWrite.ConfirmMarginMs + 1, Long.MaxValue / 1000000L)) {
      // Given a task whose confirmation wait comes from that TTL, with a row unconfirmed
      val executor = new Executor(executorRecords = 1)
      val writer = executor.writer(confirmTimeoutMs = KinesisWrite.confirmTimeoutMs(ttl))
      writer.write(row("a", "k1"))
      // When it commits, then it waits (a wrapped deadline would fail it at once), until Kinesis confirms the row
      val committing = blockedIn(writer.commit())
      executor.producer.confirmAll()
      joined(committing)
      withClue(s"TTL $ttl: ")(writer.commit() shouldBe KinesisWriterCommitMessage(1, 3))
    }
  }

  test("Given a confirmation wait of Long.MaxValue ms, when the executor's cap is full, then the task waits for " +
    "room instead of failing at once") {
    val executor = new Executor(executorRecords = 1)
    val (first, second) = (executor.writer(), executor.writer(confirmTimeoutMs = Long.MaxValue))
    first.write(row("a", "k"))
    val blocked = blockedIn(second.write(row("b", "k")))
    executor.producer.settleNext(SendResult.Written(1))
    joined(blocked)
    executor.producer.sent.size shouldBe 2
  }

  test("Given a task at its own cap of unconfirmed rows, when it writes, then it waits until one is confirmed") {
    // Given a task that may have two rows unconfirmed, with two
    val executor = new Executor
    val writer = executor.writer(taskRecords = 2)
    writer.write(row("a", "k1"))
    writer.write(row("b", "k2"))
    // When it writes a third row, then it waits without handing the row over
    val third = blockedIn(writer.write(row("c", "k3")))
    executor.producer.sent.size shouldBe 2
    // And once a row is confirmed, the third goes through
    executor.producer.settleNext(SendResult.Written(1))
    joined(third)
    executor.producer.sent.map(r => new String(r.data, "UTF-8")) shouldBe Seq("a", "b", "c")
  }

  test("Given the executor's cap filled by one task, when another task writes, then it waits for the first's " +
    "confirmations though it has none pending itself") {
    // Given an executor whose tasks may have three rows unconfirmed in all, and a task holding three
    val executor = new Executor(executorRecords = 3)
    val (first, second) = (executor.writer(), executor.writer())
    Seq("a", "b", "c").foreach(d => first.write(row(d, "k")))
    // When a second task writes a row, then it waits
    val blocked = blockedIn(second.write(row("d", "k")))
    executor.producer.sent.size shouldBe 3
    // And once one of the first task's rows is confirmed, the second task's row goes through
    executor.producer.settleNext(SendResult.Written(1))
    joined(blocked)
    executor.producer.sent.map(r => new String(r.data, "UTF-8")) shouldBe Seq("a", "b", "c", "d")
    executor.producer.confirmAll()
    Seq(first, second).map(_.commit()) shouldBe Seq(KinesisWriterCommitMessage(3, 6), KinesisWriterCommitMessage(1, 2))
  }

  test("Given rows for two streams, when a task writes them, then each stream is checked once, before its first row") {
    val executor = new Executor
    val writer = executor.writer()
    Seq(row("a", "k"), row("b", "k", "s2"), row("c", "k"), row("d", "k", "s2")).foreach(writer.write)
    executor.checkedStreams shouldBe Seq("s1", "s2")
  }

  test("Given a row the producer refuses, when it is written beside another task's rows, then only its task " +
    "fails and the shared producer goes on") {
    // Given two tasks sharing the executor's producer, which refuses one row
    val executor = new Executor
    val (bad, good) = (executor.writer(), executor.writer())
    good.write(row("before", "k"))
    executor.producer.refuse =
      r => if (r.partitionKey == "bad") Some(new IllegalArgumentException("Invalid key")) else None
    // When one task writes the refused row
    val e = the[KinesisSinkException] thrownBy bad.write(row("x", "bad"))
    bad.close()
    // Then that task fails naming the stream and the producer's reason
    e.getMessage should (include("'s1'") and include("Invalid key") and include("correct or filter out"))
    // And the other task goes on writing through the same producer, which is neither replaced nor stopped
    good.write(row("after", "k"))
    executor.producer.confirmAll()
    good.commit() shouldBe KinesisWriterCommitMessage(2, 13)
    executor.pool.acquire(settings(1000)).producer should be theSameInstanceAs executor.producer
    (executor.producers.size, executor.producer.destroyed) shouldBe ((1, 0))
  }

  test("Given a producer that takes no more rows, when a task meets it, then it is replaced for new tasks and " +
    "stopped only once the tasks holding it are done") {
    // Given two tasks on one producer, whose daemon then dies
    val executor = new Executor
    val (first, second) = (executor.writer(), executor.writer())
    executor.producer.refuse = _ => Some(new IllegalStateException("daemon died"))
    // When the first task writes a row
    val e = the[IllegalStateException] thrownBy first.write(row("a", "k1"))
    e.getMessage should (include("'s1'") and include("daemon died") and include("retries"))
    first.close()
    // Then a new task gets a new producer, and the old one is stopped only once the second task lets go
    val third = executor.writer()
    executor.producers.size shouldBe 2
    executor.producers.head.destroyed shouldBe 0
    second.close()
    executor.producers.head.destroyed shouldBe 1
    third.close()
    executor.producers.last.destroyed shouldBe 0
  }
}
