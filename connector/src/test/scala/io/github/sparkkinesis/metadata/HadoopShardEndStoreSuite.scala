package io.github.sparkkinesis.metadata

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, ShardEnd, TrimHorizon}

class HadoopShardEndStoreSuite extends AnyFunSuite with Matchers {

  private def newRoot(): String = Files.createTempDirectory("shard-ends").toString

  private def newStore(root: String = newRoot()): HadoopShardEndStore =
    new HadoopShardEndStore(root, new Configuration())

  private def end(shard: Int, seq: String, batch: Long = 3L) =
    ShardEndRecord("orders", f"shardId-$shard%012d", batch, TrimHorizon, AfterSequenceNumber(seq), 10L)

  private def record(seq: String, batch: Long = 3L, task: Int = 0) =
    TaskEndRecord(batch, task, Seq(end(0, seq, batch), end(1, s"1$seq", batch)))

  test("given no record, when asked, then there is none") {
    newStore().get(3L, 0) shouldBe None
  }

  test("given a first record, when a second attempt records other ends, then the first one wins") {
    val store = newStore()
    store.recordIfAbsent(record("100")) shouldBe record("100")
    store.recordIfAbsent(record("200")) shouldBe record("100")
    store.get(3L, 0) shouldBe Some(record("100"))
  }

  test("given 16 attempts racing, when they all record, then exactly one record wins and all see it") {
    val store = newStore()
    val pool = Executors.newFixedThreadPool(16)
    val go = new CountDownLatch(1)
    val results = (1 to 16).map { i =>
      pool.submit(new java.util.concurrent.Callable[TaskEndRecord] {
        override def call(): TaskEndRecord = { go.await(); store.recordIfAbsent(record(i.toString)) }
      })
    }
    go.countDown()
    val seen = results.map(_.get(30, TimeUnit.SECONDS)).toSet
    pool.shutdown()
    seen should have size 1
    store.get(3L, 0) shouldBe seen.headOption
  }

  test("given the records of some of a batch's tasks, when all are asked for, then those written come back") {
    val store = newStore()
    Seq(0, 2, 5).foreach(t => store.recordIfAbsent(record(s"$t", task = t)))
    store.getAll(3L, 0 until 8) shouldBe Seq(0, 2, 5).map(t => t -> record(s"$t", task = t)).toMap
    store.getAll(4L, 0 until 8) shouldBe empty
  }

  test("given records of several batches, when purged, then only batches before the bound are gone") {
    val store = newStore()
    (1L to 5L).foreach(b => store.recordIfAbsent(TaskEndRecord(b, 0, Seq(end(0, "1", b).copy(end = ShardEnd)))))
    store.purgeBefore(4L)
    (1L to 3L).foreach(b => store.get(b, 0) shouldBe None)
    (4L to 5L).foreach(b => store.get(b, 0) should not be None)
  }

  test("given per-shard records of a version before 0.2.0, when read and purged, then they are found and purged") {
    val root = newRoot()
    (2L to 4L).foreach { b =>
      val file = Paths.get(root, "orders", b.toString, "shardId-000000000000.json")
      Files.createDirectories(file.getParent)
      Files.write(file, end(0, "7", b).toJson.getBytes(UTF_8))
    }
    val store = newStore(root)
    store.legacyGet("orders", 3L, "shardId-000000000000") shouldBe Some(end(0, "7"))
    store.legacyGet("orders", 3L, "shardId-000000000001") shouldBe None
    store.purgeBefore(4L)
    store.legacyGet("orders", 3L, "shardId-000000000000") shouldBe None
    store.legacyGet("orders", 4L, "shardId-000000000000") shouldBe Some(end(0, "7", 4L))
  }

  test("given a store, when serialized to an executor, then it reads and writes the same files") {
    val store = newStore()
    store.recordIfAbsent(record("7"))
    val bytes = new ByteArrayOutputStream()
    new ObjectOutputStream(bytes).writeObject(store)
    val copy = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[ShardEndStore]
    copy.get(3L, 0) shouldBe Some(record("7"))
  }
}
