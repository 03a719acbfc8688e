package io.github.sparkkinesis.it

import java.io.File
import java.util.concurrent.TimeUnit

import scala.concurrent.duration._
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * SIGKILLs a query's JVM at random moments while records keep coming, restarting it from its checkpoint each
 * time: the parquet sink must end up with every record exactly once. Set -DcrashSuite.seed to replay a run.
 */
class CrashSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private val seed = sys.props.get("crashSuite.seed").map(_.toLong).getOrElse(System.nanoTime())
  private val random = new Random(seed)
  /** A child JVM starts Spark in 10-20 s on two busy cores; its first batch follows shortly after. */
  private val ChildProgressTimeout = 120.seconds

  private def startChild(log: File, args: String*): Process = ChildJvm.start(CrashDriver, log, args: _*)

  private def kill(child: Process): Unit = {
    child.destroyForcibly()
    if (!child.waitFor(30, TimeUnit.SECONDS)) fail("the child JVM did not die within 30 s of SIGKILL")
  }

  /** Micro-batches the query has committed, from its checkpoint's commit log. */
  private def committedBatches(checkpoint: String): Int =
    Option(new File(checkpoint, "commits").listFiles()).map(_.count(_.getName.forall(_.isDigit))).getOrElse(0)

  private def parquetRows(dir: String): Seq[OutputRecord] =
    if (!new File(dir, "_spark_metadata").exists()) Nil
    else spark.read.parquet(dir).collect().toSeq.map(row => OutputRecord.fromRow(row, batchId = -1, position = -1))

  private def parquetCount(dir: String): Long =
    if (!new File(dir, "_spark_metadata").exists()) 0L else spark.read.parquet(dir).count()

  private def tail(log: File): String = ChildJvm.tail(log)

  /** Fails at once, with the child's output, if the child died on its own. */
  private def failIfDead(child: Process, log: File): Unit =
    if (!child.isAlive) Eventually.giveUp(s"the child JVM exited with ${child.exitValue()}; ${tail(log)}")

  test(s"a query SIGKILLed and restarted 3-4 times while records keep coming writes each record once (seed $seed)") {
    // Given: a stream with a steady producer, and a query in a child JVM writing parquet with a checkpoint
    val stream = TestStreams.createStream("it-crash", shards = 2)
    val checkpoint = newCheckpointDir()
    val output = newDir("parquet").getAbsolutePath
    val logs = newDir("child-logs")
    val producer = new BackgroundProducer(stream, "crash", keys = 10)
    val kills = 3 + random.nextInt(2)
    var child: Process = null
    try {
      // When: each run is killed at a random moment after it has committed a batch of its own
      (1 to kills).foreach { run =>
        val log = new File(logs, s"run-$run.log")
        val committed = committedBatches(checkpoint)
        child = startChild(log, stream, checkpoint, output)
        Eventually.await(s"run $run to commit a batch (had $committed)", ChildProgressTimeout, tail(log)) {
          failIfDead(child, log)
          committedBatches(checkpoint) > committed
        }
        // A random moment, not a synchronisation: somewhere in the middle of later batches.
        TimeUnit.MILLISECONDS.sleep(random.nextInt(1500).toLong)
        kill(child)
      }
      val produced = producer.stop()
      val log = new File(logs, "final.log")
      child = startChild(log, stream, checkpoint, output)
      // Then: the last run catches up, and the sink holds every record exactly once
      // Once a second: each check is a Spark job in this JVM, competing with the child for the two cores.
      Eventually.await(s"all ${produced.size} records in the parquet sink after $kills kills", ChildProgressTimeout,
        s"${parquetCount(output)} rows; ${tail(log)}", every = 1.second) {
        failIfDead(child, log)
        parquetCount(output) >= produced.size
      }
      kill(child)
      info(s"$kills kills, ${produced.size} records, ${committedBatches(checkpoint)} batches committed in all")
      val rows = parquetRows(output)
      RecordChecks.assertExactlyOnce(
        produced.map(p => ((p.shardId, p.sequenceNumber, 0L), p.partitionKey, p.payload)),
        rows.map(r => (r.position3, r.partitionKey, r.payload)),
        s"parquet sink after $kills kills (seed $seed)")
    } finally {
      producer.close()
      if (child != null && child.isAlive) kill(child)
    }
  }
}
