package io.github.sparkkinesis.sink

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.types.{BinaryType, IntegerType, StringType, StructType}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.options.KinesisSinkOptions

class KinesisForeachWriterSuite extends AnyFunSuite with Matchers with BlockingThreads {

  private val schema = new StructType()
    .add("id", IntegerType)
    .add("data", StringType)
    .add("partitionKey", StringType)
    .add("streamName", StringType)

  private def row(data: String, key: String, stream: String = "s1"): Row =
    new GenericRowWithSchema(Array[Any](1, data, key, stream), schema)

  /** The sink's options without kinesis.streamName, so building a writer asks no stream anything. */
  private val offline = Map("kinesis.region" -> "eu-west-1")

  /** An executor: the pool of fake producers the writers' tasks share, and a clock its idle sweep reads. */
  private final class Executor {
    val producers: mutable.Buffer[FakeRecordProducer] = mutable.Buffer.empty
    val pool = new ProducerPool(
      _ => producers.synchronized { producers += new FakeRecordProducer; producers.last },
      idleMs = 0L)
    private val options = KinesisSinkOptions.parse(offline)
    private val settings = KinesisDataWriterFactory.of(options, null).settings

    /** A foreach writer of the sink's `columns` (resolved from the rows' schema unless given). */
    def writer(columns: Option[SinkColumns] = None): KinesisForeachWriter =
      new KinesisForeachWriter(
        options,
        columns,
        c =>
          new DataWriterFactory {
            override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
              new KinesisDataWriter(
                c,
                pool.acquire(settings),
                WriterLimits(confirmTimeoutMs = 10000L, maxPendingRecords = 1000, maxPendingBytes = 1L << 20),
                _ => 1024L * 1024)
          })

    def producer: FakeRecordProducer = producers.synchronized(producers.head)

    /** How many producers no task holds any more (each is stopped by the sweep). */
    def released(): Int = pool.destroyIdle()
  }

  test("Given rows processed in an epoch, when it closes without error, then it returns only once Kinesis " +
    "confirmed every row, and lets go of the producer") {
    // Given three rows handed over as they are processed, before the epoch ends
    val executor = new Executor
    val writer = executor.writer()
    writer.open(3L, 7L) shouldBe true
    Seq(row("a", "k1"), row("bb", "k2"), row("ccc", "k3", "other")).foreach(writer.process)
    executor.producer.sent.map(r => (r.stream, r.partitionKey, new String(r.data, UTF_8))) shouldBe Seq(
      ("s1", "k1", "a"),
      ("s1", "k2", "bb"),
      ("other", "k3", "ccc"))
    // When the epoch ends, then close waits for their confirmation
    val closing = blockedIn(writer.close(null))
    executor.released() shouldBe 0
    executor.producer.confirmAll()
    joined(closing)
    // And the producer is no longer held
    executor.released() shouldBe 1
  }

  test("Given a row that fails for good, when the epoch closes without error, then close throws the producer's " +
    "explanation so the epoch does not commit") {
    val executor = new Executor
    val writer = executor.writer()
    writer.open(0L, 1L)
    writer.process(row("a", "k1"))
    writer.process(row("b", "k2"))
    executor.producer.settleNext(SendResult.Written(1))
    executor.producer.settleNext(SendResult.Failed("stream 's1' is gone"))
    the[KinesisSinkException] thrownBy writer.close(null) should have message "stream 's1' is gone"
    executor.released() shouldBe 1
    // A second close (Spark's, after the failed one) has nothing left to do
    writer.close(new RuntimeException("the task failed"))
  }

  test("Given an epoch that failed, when it closes with the error, then it lets go at once without waiting") {
    val executor = new Executor
    val writer = executor.writer()
    writer.open(0L, 1L)
    writer.process(row("a", "k1"))
    writer.close(new RuntimeException("a later operator failed"))
    executor.released() shouldBe 1
    executor.producer.pendingCount shouldBe 1 // handed over, so perhaps written: at least once
  }

  test("Given a row the sink cannot write, when it is processed, then it fails naming the column") {
    val writer = new Executor().writer()
    writer.open(0L, 1L)
    (the[IllegalArgumentException] thrownBy writer.process(row("a", null))).getMessage should
      include("column 'partitionKey' is null")
  }

  test("Given epochs one after another, when each closes, then the next one writes through a writer of its own") {
    val executor = new Executor
    val writer = executor.writer()
    for (epoch <- 1L to 3L) {
      writer.open(0L, epoch)
      writer.process(row(s"e$epoch", "k"))
      executor.producer.confirmAll()
      writer.close(null)
    }
    executor.producer.sent.map(r => new String(r.data, UTF_8)) shouldBe Seq("e1", "e2", "e3")
    executor.producers.size shouldBe 1
  }

  test("Given an epoch without rows, when it closes, then it never took a producer") {
    val executor = new Executor
    val writer = executor.writer()
    writer.open(0L, 1L)
    writer.close(null)
    executor.producers shouldBe empty
  }

  test("Given columns resolved on the driver, when rows come without a schema, then they are written by position") {
    val executor = new Executor
    val writer = executor.writer(Some(SinkColumns.resolve(schema, None)))
    writer.open(0L, 1L)
    writer.process(Row(1, "a", "k1", "s1"))
    executor.producer.sent.map(r => (r.stream, r.partitionKey)) shouldBe Seq(("s1", "k1"))
  }

  test("Given no schema on the driver and a row without one, when it is processed, then it fails saying what to do") {
    val writer = new Executor().writer()
    writer.open(0L, 1L)
    (the[IllegalArgumentException] thrownBy writer.process(Row(1, "a", "k1", "s1"))).getMessage should
      include("KinesisForeachWriter(options, df.schema)")
  }

  test("Given binary data and kinesis.streamName, when a row is processed, then its bytes go to that stream") {
    val binary = new StructType().add("data", BinaryType).add("partitionKey", StringType)
    val executor = new Executor
    val writer = executor.writer(Some(SinkColumns.resolve(binary, Some("target"))))
    writer.open(0L, 1L)
    writer.process(new GenericRowWithSchema(Array[Any](Array[Byte](1, 2), "k"), binary))
    executor.producer.sent.map(r => (r.stream, r.data.toSeq)) shouldBe Seq(("target", Seq[Byte](1, 2)))
  }

  test("Given the sink's options, when a writer is built with a bad one, then it fails with the sink's message") {
    val options = offline + ("kinesis.endpointUrl" -> "http://127.0.0.1:4567")
    val sinkMessage = (the[IllegalArgumentException] thrownBy KinesisSinkOptions.parse(options)).getMessage
    (the[IllegalArgumentException] thrownBy KinesisForeachWriter(options)).getMessage shouldBe sinkMessage
    sinkMessage should include("HTTPS only")
  }

  test("Given a DataFrame's schema without a partitionKey column, when a writer is built for it, then it fails at " +
    "once naming the column, as the sink does") {
    val noKey = new StructType().add("data", StringType)
    (the[IllegalArgumentException] thrownBy KinesisForeachWriter(offline + ("kinesis.streamName" -> "s"), noKey))
      .getMessage should include("has no 'partitionKey' column")
  }

  test("Given a writer built from options, when Spark serializes it to an executor, then it comes back whole and " +
    "without secrets in its name") {
    val writer = KinesisForeachWriter(
      offline ++ Map("kinesis.awsAccessKeyId" -> "AKIDEXAMPLE", "kinesis.awsSecretKey" -> "very-secret"))
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(writer)
    out.close()
    val back = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
    back shouldBe a[KinesisForeachWriter]
    back.toString shouldBe writer.toString
    writer.toString should not include "very-secret"
  }
}
