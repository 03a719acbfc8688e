package io.github.sparkkinesis.metadata

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, TrimHorizon}
import io.github.sparkkinesis.options.KinesisSourceOptions

/** The DynamoDB store's items live as long as their checkpoint: keyed by its life, purged with it, expiring. */
class DynamoDbLifecycleSuite extends AnyFunSuite with Matchers {

  private val options = KinesisSourceOptions.parse(Map(
    "kinesis.streamName" -> "orders",
    "kinesis.region" -> "us-east-1",
    "kinesis.metadataCommitterType" -> "DYNAMODB",
    "kinesis.dynamodb.tableName" -> "ends"))

  private def record(batch: Long, task: Int, seq: String) = TaskEndRecord(
    batch,
    task,
    Seq(
      ShardEndRecord("orders", "shardId-000000000000", batch, TrimHorizon, AfterSequenceNumber(seq), 1L)))

  private def open(fake: FakeDynamoDb, checkpoint: File): ShardEndStore =
    ShardEndStores.open(options, checkpoint.toString, new Configuration(), new FakeDynamoDbAccess(fake))

  private def queryKey(checkpoint: File): String = s"file:${checkpoint.getAbsolutePath}"

  test("given a checkpoint deleted, when the query starts again on the same path, then it starts clean and the " +
    "earlier checkpoint's items are deleted") {
    // Given a query that recorded two batches, then a checkpoint deleted by the user to reprocess the stream
    val fake = new FakeDynamoDb()
    val checkpoint = Files.createTempDirectory("checkpoint").toFile
    val first = open(fake, checkpoint)
    (0 until 5).foreach(task => first.recordIfAbsent(record(0L, task, s"10$task")))
    first.recordIfAbsent(record(1L, 0, "200"))
    FileUtils.deleteDirectory(checkpoint)
    checkpoint.mkdirs()

    // When the query starts on the same path, with the same table
    val second = open(fake, checkpoint)

    // Then none of the earlier records is seen, they are gone from the table, and the new life records afresh
    second.get(0L, 0) shouldBe None
    second.getAll(1L, Seq(0)) shouldBe empty
    fake.sortKeys(queryKey(checkpoint)) shouldBe empty
    second.recordIfAbsent(record(0L, 0, "300")) shouldBe record(0L, 0, "300")
    // And a restart of this life keeps its items
    open(fake, checkpoint).get(0L, 0) shouldBe Some(record(0L, 0, "300"))
  }

  test("given a checkpoint an older version started (no run identity), when it restarts, then it reads and purges " +
    "its items under their old keys") {
    // Given the items and the initial offset file an older version left
    val fake = new FakeDynamoDb()
    fake.tableExists = true
    val checkpoint = Files.createTempDirectory("checkpoint").toFile
    Files.write(new File(checkpoint, "initial-offset.json").toPath, "{}".getBytes(UTF_8))
    val old = new DynamoDbShardEndStore(
      options.client,
      DynamoDbTable("ends", None),
      queryKey(checkpoint),
      None,
      new FakeDynamoDbAccess(fake))
    Seq(3L, 4L).foreach(b => old.recordIfAbsent(record(b, 0, s"$b")))
    fake.sortKeys(queryKey(checkpoint)) shouldBe Seq("0000000000000000003/0000000000", "0000000000000000004/0000000000")

    // When this version opens the store on that checkpoint
    val store = open(fake, checkpoint)

    // Then it reads them, purges by batch as before, and leaves the checkpoint without a run identity
    store.get(4L, 0) shouldBe Some(record(4L, 0, "4"))
    store.purgeBefore(4L)
    fake.sortKeys(queryKey(checkpoint)) shouldBe Seq("0000000000000000004/0000000000")
    new File(checkpoint, CheckpointRun.FileName).exists shouldBe false
  }

  test("given a life's items in batches, when purged before a batch, then only its own older batches go") {
    val fake = new FakeDynamoDb(pageSize = 2)
    val checkpoint = Files.createTempDirectory("checkpoint").toFile
    val store = open(fake, checkpoint)
    for (batch <- 0L to 3L; task <- 0 to 2) store.recordIfAbsent(record(batch, task, s"$batch$task"))
    store.purgeBefore(2L)
    store.getAll(1L, 0 to 2) shouldBe empty
    store.getAll(2L, 0 to 2).keySet shouldBe Set(0, 1, 2)
    store.getAll(3L, 0 to 2).keySet shouldBe Set(0, 1, 2)
  }

  test("given a new table, then the connector enables TTL on expiresAt, and each item expires 400 days after it " +
    "was written") {
    // Given / When the table is created
    val fake = new FakeDynamoDb()
    DynamoDbTable("ends", None).ensure(options.client, new FakeDynamoDbAccess(fake))
    fake.ttlAttribute shouldBe Some("expiresAt")
    val store = new DynamoDbShardEndStore(
      options.client,
      DynamoDbTable("ends", None),
      "q",
      Some("r1"),
      new FakeDynamoDbAccess(fake),
      clock = () => 1700000000000L)
    store.recordIfAbsent(record(0L, 0, "1"))

    // Then
    val item = fake.items(("q", "run-r1/0000000000000000000/0000000000"))
    item("expiresAt").n.toLong shouldBe 1700000000L + 400L * 24 * 3600
    // A table that exists (made by the user) is left as it is: docs/exactly-once.md names the attribute to enable
    val existing = new FakeDynamoDb()
    existing.tableExists = true
    DynamoDbTable("ends", None).ensure(options.client, new FakeDynamoDbAccess(existing))
    existing.calls should not contain "UpdateTimeToLive"
  }

  test("given a DynamoDB store, then its description names the table and key, never kinesis.metadataPath") {
    val fake = new FakeDynamoDb()
    val checkpoint = Files.createTempDirectory("checkpoint").toFile
    val store = open(fake, checkpoint)
    Seq("DynamoDB table ends", "kinesis.dynamodb.tableName", queryKey(checkpoint), "run-").foreach(
      store.describe should include(_))
    (store.describe + store.foreignRecordsAdvice) should not include "metadataPath"
  }
}
