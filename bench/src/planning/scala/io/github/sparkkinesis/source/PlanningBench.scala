package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}

/**
 * The driver's cost per micro-batch at 100, 1,000 and 5,000 shards, with the in-memory fake client (no network) and the
 * Hadoop metadata store on local disk: the time to plan a batch (latestOffset, which reads the previous batch's task
 * records and checks idle shards, plus planInputPartitions), the offset's size, and the driver's heap. Two shapes: a
 * backlog in every shard (every shard planned), and a steady trickle into a tenth of the shards with the default pacing
 * (the clock moves 1 s between batches). Run by `bench/run --only planning`; prints figures only.
 */
object PlanningBench {

  def main(args: Array[String]): Unit = {
    val sizes = if (args.nonEmpty) args.toSeq.map(_.toInt) else Seq(100, 1000, 5000)
    println("planning: driver time per micro-batch (ms), fake client, local metadata store, default options")
    println(f"${"shards"}%7s ${"shape"}%8s ${"tasks"}%6s ${"median"}%8s ${"max"}%8s ${"offset KB"}%10s ${"heap MB"}%8s")
    sizes.foreach(n => run(n).foreach(println))
  }

  private def run(shards: Int): Seq[String] = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val ids = fake.createStream("s", shards)
    val random = new Random(shards)
    val heapBefore = usedHeapMb()
    val driver = new MicroBatchDriver(
      fake,
      Map(
        "kinesis.startingPosition" -> "TRIM_HORIZON",
        "kinesis.getRecords.fetchInterval" -> "500",
        "kinesis.idleShardCheckInterval" -> "1s",
        "kinesis.describeShardInterval" -> "1s"),
      clock = clock,
      parallelism = 16)

    def timedBatch(): (Double, Int) = {
      val started = System.nanoTime()
      val end = driver.plan().getOrElse(throw new IllegalStateException("no batch was planned"))
      val tasks = driver.stream.planInputPartitions(driver.committed, end).length
      val ms = (System.nanoTime() - started) / 1e6
      driver.read(end)
      driver.stream.commit(end)
      driver.committed = end
      // Spark asks again as soon as a batch has ended: the driver learns then that its shards were read, and paces
      // their next look from that moment. Shards a look left unchecked (at most 8 checks per probe thread) are read
      // by the batches that follow, untimed, until nothing is new.
      Iterator.continually(driver.runBatch()).takeWhile(_.isDefined).foreach(_ => ())
      (ms, tasks)
    }

    // Backlog: every shard has records, every batch plans every shard (a warm-up batch first).
    ids.foreach(id => fake.putRecordToShard("s", id, "first".getBytes(UTF_8)))
    timedBatch()
    val backlog = (1 to 5).map { i =>
      ids.foreach(id => fake.putRecordToShard("s", id, s"backlog-$i".getBytes(UTF_8)))
      clock.advance(1000)
      timedBatch()
    }
    val backlogHeap = usedHeapMb() - heapBefore
    // Steady: a tenth of the shards get a record before each batch.
    val steady = (1 to 10).map { i =>
      random.shuffle(ids).take(math.max(1, shards / 10))
        .foreach(id => fake.putRecordToShard("s", id, s"steady-$i".getBytes(UTF_8)))
      clock.advance(1000)
      timedBatch()
    }
    val offsetKb = driver.committed.json().length / 1024.0
    val steadyHeap = usedHeapMb() - heapBefore
    driver.stream.stop()
    Seq(line(shards, "backlog", backlog, offsetKb, backlogHeap), line(shards, "steady", steady, offsetKb, steadyHeap))
  }

  private def line(shards: Int, shape: String, batches: Seq[(Double, Int)], offsetKb: Double, heapMb: Double) = {
    val times = batches.map(_._1).sorted
    f"$shards%7d $shape%8s ${batches.map(_._2).max}%6d ${times(times.size / 2)}%8.1f ${times.last}%8.1f " +
      f"$offsetKb%10.1f $heapMb%8.1f"
  }

  private def usedHeapMb(): Double = {
    System.gc()
    val rt = Runtime.getRuntime
    (rt.totalMemory() - rt.freeMemory()) / 1048576.0
  }
}
