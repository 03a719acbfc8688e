package io.github.sparkkinesis.it

import java.io.File
import java.util.concurrent.TimeUnit

import scala.collection.JavaConverters._
import scala.concurrent.duration._
import scala.util.Random
import scala.util.control.NonFatal

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers
import software.amazon.awssdk.services.kinesis.model.{DeregisterStreamConsumerRequest, ListStreamConsumersRequest}

/**
 * SIGKILLs a query's JVM at random moments while records keep coming, restarting it from its checkpoint each time: the
 * parquet sink must end up with every record exactly once. Runs alternate between a kill at a random moment after the
 * run's first commit and a kill while a batch is running (planned, not yet committed). Set -DcrashSuite.seed to replay
 * a run.
 */
class CrashSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  private val seed = sys.props.get("crashSuite.seed").map(_.toLong).getOrElse(System.nanoTime())
  private val random = new Random(seed)

  /**
   * A child JVM starts Spark in 10-20 s on two busy cores, its first batch follows shortly after; with bin/test's
   * Python tests running beside it, starting took 50 s once.
   */
  private val ChildProgressTimeout = 300.seconds

  private def startChild(
      log: File,
      stream: String,
      checkpoint: String,
      output: String,
      options: Seq[(String, String)]): Process =
    ChildJvm.start(CrashDriver, log, Seq(stream, checkpoint, output) ++ options.map { case (k, v) => s"$k=$v" }: _*)

  private def kill(child: Process): Unit = {
    child.destroyForcibly()
    if (!child.waitFor(30, TimeUnit.SECONDS)) fail("the child JVM did not die within 30 s of SIGKILL")
  }

  /** The ids of the batches in one of the checkpoint's logs ("offsets": planned, "commits": committed). */
  private def batchIds(checkpoint: String, log: String): Seq[Long] =
    Option(new File(checkpoint, log).listFiles()).toSeq.flatten.map(_.getName).filter(_.forall(_.isDigit)).map(_.toLong)

  /** Micro-batches the query has committed, from its checkpoint's commit log. */
  private def committedBatches(checkpoint: String): Int = batchIds(checkpoint, "commits").size

  /** The batch the query has planned but not committed, if any: a batch running now. */
  private def batchInFlight(checkpoint: String): Option[Long] = {
    val planned = batchIds(checkpoint, "offsets")
    Some(planned).filter(_.nonEmpty).map(_.max).filter(_ > (-1L +: batchIds(checkpoint, "commits")).max)
  }

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
    crashesAndRestarts("it-crash", kills = 3 + random.nextInt(2), _ => Nil)
  }

  test(
    s"Given the DynamoDB metadata store, a query SIGKILLed and restarted 3-4 times writes each record once (seed " +
      s"$seed)") {
    val store = DynamoDbLocal.storeOptions()
    crashesAndRestarts("it-crash", kills = 3 + random.nextInt(2), _ => store)
  }

  test(s"Given enhanced fan-out, a query SIGKILLed and restarted 3 times writes each record once (seed $seed)") {
    // Each run reads through a consumer of its own (crash-1, crash-2, ..., crash-final) from the same checkpoint.
    // Why: a subscription is exclusive per consumer and shard, and kinesis-mock 0.6.2 keeps a SIGKILLed JVM's
    // subscriptions open until their 5-minute end (its lease goes only when the server-side stream finishes), so a
    // restart through the same consumer is refused ("Another active subscription exists", ResourceInUse) for
    // minutes. AWS lets a new subscription take over after about 5 s; that rule is modelled in the fake client
    // and tested there (FanOutPagesSuite). Offsets do not depend on the consumer, so switching consumers
    // across restarts is a user's scenario too; FanOutConsumerSuite tests what becomes of the earlier one.
    // Batches through kinesis-mock's subscriptions (an event a second) take a second or two: a wider kill window.
    crashesAndRestarts(
      "it-crash-efo",
      kills = 3,
      run =>
        Seq(
          "kinesis.endpointUrl" -> KinesisMock.tlsEndpoint,
          "kinesis.verifyCertificate" -> "false",
          "kinesis.consumerType" -> "SubscribeToShard",
          "kinesis.consumerName" -> s"crash-$run"),
      killWindow = 3.seconds,
      cleanUp = deregisterConsumers)
  }

  /** Deregisters the consumers the runs left (a killed run never stops), so they cost the emulator nothing. */
  private def deregisterConsumers(stream: String): Unit = {
    val streamArn = TestStreams.arnOf(stream)
    TestStreams.client.listStreamConsumers(ListStreamConsumersRequest.builder().streamARN(streamArn).build())
      .consumers.asScala.foreach(c =>
        TestStreams.client.deregisterStreamConsumer(
          DeregisterStreamConsumerRequest.builder().consumerARN(c.consumerARN).build()))
  }

  /**
   * Kills a query reading a new stream of prefix `prefix` `kills` times, then checks the sink after a last run;
   * `options(run)` are a run's source options ("1" to the number of kills, then "final"); a kill at a random moment
   * comes within `killWindow` of the run's first commit; `cleanUp` gets the stream once the last run is dead, whatever
   * happened.
   */
  private def crashesAndRestarts(
      prefix: String,
      kills: Int,
      options: String => Seq[(String, String)],
      killWindow: FiniteDuration = 1500.millis,
      cleanUp: String => Unit = _ => ()): Unit = {
    // Given: a stream with a steady producer, and a query in a child JVM writing parquet with a checkpoint
    val stream = TestStreams.createStream(prefix, shards = 2)
    val checkpoint = newCheckpointDir()
    val output = newDir("parquet").getAbsolutePath
    val logs = newDir("child-logs")
    val producer = new BackgroundProducer(stream, "crash", keys = 10)
    var child: Process = null
    try {
      // When: each run is killed after it has committed a batch of its own, at a random moment, or (every second
      // run) as soon as a batch is running
      val inFlightKills = (1 to kills).map { run =>
        val log = new File(logs, s"run-$run.log")
        val committed = committedBatches(checkpoint)
        child = startChild(log, stream, checkpoint, output, options(run.toString))
        Eventually.await(s"run $run to commit a batch (had $committed)", ChildProgressTimeout, tail(log)) {
          failIfDead(child, log)
          committedBatches(checkpoint) > committed
        }
        val running = if (run % 2 == 0) {
          Some(Eventually.awaitValue(s"run $run to start a batch", ChildProgressTimeout, tail(log), every = 5.millis) {
            failIfDead(child, log)
            batchInFlight(checkpoint)
          })
        } else {
          // A random moment, not a synchronisation: somewhere in the middle of later batches.
          TimeUnit.MILLISECONDS.sleep(random.nextInt(killWindow.toMillis.toInt).toLong)
          None
        }
        kill(child)
        running.count(batch => !batchIds(checkpoint, "commits").contains(batch)) // still uncommitted when it died
      }.sum
      val produced = producer.stop()
      val log = new File(logs, "final.log")
      child = startChild(log, stream, checkpoint, output, options("final"))
      // Then: the last run catches up, and the sink holds every record exactly once
      // Once a second: each check is a Spark job in this JVM, competing with the child for the two cores.
      Eventually.await(
        s"all ${produced.size} records in the parquet sink after $kills kills",
        ChildProgressTimeout,
        s"${parquetCount(output)} rows; ${tail(log)}",
        every = 1.second) {
        failIfDead(child, log)
        parquetCount(output) >= produced.size
      }
      kill(child)
      info(s"$kills kills ($inFlightKills with a batch running), ${produced.size} records, " +
        s"${committedBatches(checkpoint)} batches committed in all")
      val rows = parquetRows(output)
      RecordChecks.assertExactlyOnce(
        produced.map(p => ((p.shardId, p.sequenceNumber, 0L), p.partitionKey, p.payload)),
        rows.map(r => (r.position3, r.partitionKey, r.payload)),
        s"parquet sink after $kills kills (seed $seed)")
    } finally {
      producer.close()
      try { if (child != null && child.isAlive) kill(child) }
      finally {
        try cleanUp(stream)
        catch { case NonFatal(e) => info(s"clean-up of $stream failed: $e") } // keep the test's own failure
      }
    }
  }
}
