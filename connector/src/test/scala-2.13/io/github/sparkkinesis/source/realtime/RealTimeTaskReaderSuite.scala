package io.github.sparkkinesis.source.realtime

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{ClientSettings, FakeKinesisClient, RetrySettings}
import io.github.sparkkinesis.metadata.HadoopShardEndStore
import io.github.sparkkinesis.offsets.ShardPosition.TrimHorizon
import io.github.sparkkinesis.source.reading.{ReaderSettings, TaskShard}

/** A real-time task as Spark calls it ([[RealTimeTaskReader]]), over an idle shard of the fake client. */
class RealTimeTaskReaderSuite extends AnyFunSuite with Matchers {

  private def idleReader(): RealTimeTaskReader = {
    val fake = new FakeKinesisClient(() => System.currentTimeMillis())
    val Seq(shard) = fake.createStream("s", 1)
    val partition = RealTimePartition(
      1L,
      0,
      Seq(TaskShard("s", shard, 1L, TrimHorizon, None)),
      RealTimeLineage(Map(ShardRef("s", shard) -> 0), Set.empty))
    val settings = ReaderSettings(
      ClientSettings(None, None, None, RetrySettings(0, 1, 2)),
      100,
      20L,
      Long.MaxValue,
      60000L,
      5L,
      20L,
      dropMisroutedRecords = false)
    val store = new HadoopShardEndStore(Files.createTempDirectory("rt-ends").toString, new Configuration())
    new RealTimeTaskReader(new RealTimeRows(partition, settings, store, fake))
  }

  test("given Spark 4.2's start time, when nothing arrives, then the reader returns at that start plus the timeout, " +
    "not a whole timeout from the call") {
    val reader = idleReader()
    try {
      val calledAt = System.currentTimeMillis()
      val status = reader.nextWithTimeout(java.lang.Long.valueOf(calledAt - 400L), java.lang.Long.valueOf(500L))
      status.hasRecord shouldBe false
      (System.currentTimeMillis() - calledAt) should be < 350L
    } finally reader.close()
  }

  test("given no start time, when nothing arrives, then the reader waits the whole timeout from the call") {
    val reader = idleReader()
    try {
      val calledAt = System.currentTimeMillis()
      reader.nextWithTimeout(null, java.lang.Long.valueOf(200L)).hasRecord shouldBe false
      (System.currentTimeMillis() - calledAt) should be >= 200L
    } finally reader.close()
  }
}
