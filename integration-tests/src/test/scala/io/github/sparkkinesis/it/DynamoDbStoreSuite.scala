package io.github.sparkkinesis.it

import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.collection.JavaConverters._

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.metadata.{
  DynamoDbShardEndStore,
  ShardEndRecord,
  ShardEndStore,
  ShardEndStores,
  TaskEndRecord
}
import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, TrimHorizon}
import io.github.sparkkinesis.options.KinesisSourceOptions

/** The DynamoDB metadata store against DynamoDB Local, through the shaded JAR's relocated SDK. */
class DynamoDbStoreSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private def open(storeOptions: Seq[(String, String)], checkpoint: String = newCheckpointDir()): ShardEndStore =
    ShardEndStores.open(
      KinesisSourceOptions.parse(SparkHarness.kinesisOptions("orders", "LATEST") ++ storeOptions),
      checkpoint,
      new Configuration())

  private def record(batch: Long, task: Int, seq: String) = TaskEndRecord(
    batch,
    task,
    Seq(
      ShardEndRecord("orders", "shardId-000000000000", batch, TrimHorizon, AfterSequenceNumber(seq), 10L),
      ShardEndRecord("orders", "shardId-000000000001", batch, TrimHorizon, AfterSequenceNumber(s"1$seq"), 12L)))

  test("Given a new table name, when the store opens, then it creates the table, and a second open reuses it") {
    val options = DynamoDbLocal.storeOptions()
    val store = open(options)
    store shouldBe a[DynamoDbShardEndStore]
    store.get(0L, 0) shouldBe None
    store.recordIfAbsent(record(0L, 0, "100")) shouldBe record(0L, 0, "100")
    open(options).get(0L, 0) shouldBe None // another query's checkpoint: its own partition of the same table
  }

  test("Given 16 attempts of one task racing, when they all record, then exactly one record wins and all see it") {
    // Given
    val store = open(DynamoDbLocal.storeOptions())
    val pool = Executors.newFixedThreadPool(16)
    val go = new CountDownLatch(1)
    try {
      // When each attempt records ends of its own at the same moment
      val results = (0 until 16).map { attempt =>
        pool.submit(new java.util.concurrent.Callable[TaskEndRecord] {
          override def call(): TaskEndRecord = {
            go.await(30, TimeUnit.SECONDS)
            store.recordIfAbsent(record(7L, 3, s"${1000 + attempt}"))
          }
        })
      }
      go.countDown()
      val held = results.map(_.get(60, TimeUnit.SECONDS))

      // Then every attempt got the same record, and it is the one stored
      held.distinct should have size 1
      store.get(7L, 3) shouldBe Some(held.head)
    } finally pool.shutdownNow()
  }

  test("Given 150 tasks recorded, when read together, then all come back, and a purge drops only older batches") {
    // Given two batches of 150 tasks each (more than one BatchGetItem of 100)
    val checkpoint = newCheckpointDir()
    val options = DynamoDbLocal.storeOptions()
    val store = open(options, checkpoint)
    for (batch <- Seq(4L, 5L); task <- 0 until 150) store.recordIfAbsent(record(batch, task, s"$batch$task"))

    // When / Then
    val all = store.getAll(5L, (0 until 150) :+ 999)
    all.keySet shouldBe (0 until 150).toSet
    all(42) shouldBe record(5L, 42, "542")

    store.purgeBefore(5L)
    store.getAll(4L, 0 until 150) shouldBe empty
    store.getAll(5L, 0 until 150).size shouldBe 150
    // A store opened again on the same checkpoint (a restart) sees the same items
    open(options, checkpoint).get(5L, 149) shouldBe Some(record(5L, 149, "5149"))
  }

  test("Given a query reading with the DynamoDB store, when it restarts from its checkpoint, then it reads each " +
    "record once") {
    // Given
    val stream = TestStreams.createStream("it-dynamodb", shards = 2)
    val first = TestStreams.putStrings(stream, TestStreams.testRecords("before", 100, keys = 10))
    val storeOptions = DynamoDbLocal.storeOptions()
    val checkpoint = newCheckpointDir()
    val sink = new BatchCollector
    val run1 = sink.start(readKinesis(stream, "TRIM_HORIZON", storeOptions: _*), checkpoint)
    sink.awaitRecords(run1, first.size)
    run1.stop()

    // When more records arrive and the query restarts from its checkpoint
    val second = TestStreams.putStrings(stream, TestStreams.testRecords("after", 100, keys = 10))
    val run2 = sink.start(readKinesis(stream, "TRIM_HORIZON", storeOptions: _*), checkpoint)

    // Then
    assertReadsExactly(run2, sink, first ++ second)
    run2.stop()
    // And the ends were kept in DynamoDB, not in files under the checkpoint
    java.nio.file.Files.walk(new java.io.File(checkpoint).toPath).iterator().asScala
      .filter(_.getFileName.toString == "shard-ends").toList shouldBe empty
  }

  test("Given a query read with the DynamoDB store, when its checkpoint is deleted and it starts again on the same " +
    "path with the same table, then it starts clean and reads the stream again, each record once") {
    // Given a query that started at LATEST and read what came after, its ends kept in the table
    val stream = TestStreams.createStream("it-dynamodb-reset", shards = 2)
    val before = TestStreams.putStrings(stream, TestStreams.testRecords("before", 50, keys = 10))
    val storeOptions = DynamoDbLocal.storeOptions()
    val checkpoint = newCheckpointDir()
    val firstSink = new BatchCollector
    val run1 = firstSink.start(readKinesis(stream, "LATEST", storeOptions: _*), checkpoint)
    run1.processAllAvailable()
    val after = TestStreams.putStrings(stream, TestStreams.testRecords("after", 50, keys = 10))
    firstSink.awaitRecords(run1, after.size)
    run1.stop()

    // When the user deletes the checkpoint to reprocess the stream, and starts the query on the same path
    org.apache.commons.io.FileUtils.deleteDirectory(new java.io.File(checkpoint))
    val sink = new BatchCollector
    val run2 = sink.start(readKinesis(stream, "TRIM_HORIZON", storeOptions: _*), checkpoint)

    // Then the earlier checkpoint's items are not taken for this one's: every record, once
    assertReadsExactly(run2, sink, before ++ after)
    run2.stop()
  }
}
