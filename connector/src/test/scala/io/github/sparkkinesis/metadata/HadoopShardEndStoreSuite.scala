package io.github.sparkkinesis.metadata

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.offsets.ShardPosition.{AfterSequenceNumber, ShardEnd, TrimHorizon}

class HadoopShardEndStoreSuite extends AnyFunSuite with Matchers {

  private def newStore(): HadoopShardEndStore =
    new HadoopShardEndStore(Files.createTempDirectory("shard-ends").toString, new Configuration())

  private def record(end: String, batch: Long = 3L) =
    ShardEndRecord("orders", "shardId-000000000000", batch, TrimHorizon, AfterSequenceNumber(end), 10L)

  test("given no record, when asked, then there is none") {
    newStore().get("orders", 3L, "shardId-000000000000") shouldBe None
  }

  test("given a first record, when a second attempt records another end, then the first one wins") {
    val store = newStore()
    store.recordIfAbsent(record("100")) shouldBe record("100")
    store.recordIfAbsent(record("200")) shouldBe record("100")
    store.get("orders", 3L, "shardId-000000000000") shouldBe Some(record("100"))
  }

  test("given 16 attempts racing, when they all record, then exactly one end wins and all see it") {
    val store = newStore()
    val pool = Executors.newFixedThreadPool(16)
    val go = new CountDownLatch(1)
    val results = (1 to 16).map { i =>
      pool.submit(new java.util.concurrent.Callable[ShardEndRecord] {
        override def call(): ShardEndRecord = { go.await(); store.recordIfAbsent(record(i.toString)) }
      })
    }
    go.countDown()
    val seen = results.map(_.get(30, TimeUnit.SECONDS)).toSet
    pool.shutdown()
    seen should have size 1
    store.get("orders", 3L, "shardId-000000000000") shouldBe seen.headOption
  }

  test("given records of several batches, when purged, then only batches before the bound are gone") {
    val store = newStore()
    (1L to 5L).foreach(b => store.recordIfAbsent(record("1", b).copy(end = ShardEnd)))
    store.purgeBefore("orders", 4L)
    (1L to 3L).foreach(b => store.get("orders", b, "shardId-000000000000") shouldBe None)
    (4L to 5L).foreach(b => store.get("orders", b, "shardId-000000000000") should not be None)
  }

  test("given a store, when serialized to an executor, then it reads and writes the same files") {
    val store = newStore()
    store.recordIfAbsent(record("7"))
    val bytes = new ByteArrayOutputStream()
    new ObjectOutputStream(bytes).writeObject(store)
    val copy = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[ShardEndStore]
    copy.get("orders", 3L, "shardId-000000000000") shouldBe Some(record("7"))
  }
}
