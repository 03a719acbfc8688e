package io.github.sparkkinesis.demo

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicBoolean

import scala.util.Random

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.{col, from_json}
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.types.{DoubleType, StringType, StructType}

import io.github.sparkkinesis.it.{KinesisMock, TestStreams}

/**
 * The main job (`bin/demo`): a local end-to-end pipeline. Starts kinesis-mock on 127.0.0.1, creates a stream,
 * produces JSON events continuously and runs a Structured Streaming query through the connector that prints
 * a running count and amount per event type. Stops after `--seconds` or on Ctrl-C. With `--stream NAME
 * --region R` it reads that AWS stream instead (credentials from the default chain) and produces nothing.
 */
object DemoPipeline {

  private final case class Args(seconds: Int = 60, stream: Option[String] = None, region: Option[String] = None)

  private def parse(args: List[String], acc: Args = Args()): Args = args match {
    case "--seconds" :: n :: rest if n.forall(_.isDigit) => parse(rest, acc.copy(seconds = n.toInt))
    case "--stream" :: s :: rest                         => parse(rest, acc.copy(stream = Some(s)))
    case "--region" :: r :: rest                         => parse(rest, acc.copy(region = Some(r)))
    case Nil                                             => acc
    case other =>
      System.err.println(s"bin/demo: unexpected argument(s) ${other.mkString(" ")}\n" +
        "usage: bin/demo [--seconds N] [--stream NAME --region REGION]")
      sys.exit(2)
  }

  private val eventSchema = new StructType()
    .add("eventType", StringType).add("userId", StringType).add("amount", DoubleType)

  def main(argv: Array[String]): Unit = {
    val args = parse(argv.toList)
    val local = args.stream.isEmpty
    val stream = args.stream.getOrElse {
      println(s"Starting kinesis-mock on 127.0.0.1 ...")
      println(s"kinesis-mock is at ${KinesisMock.endpoint}")
      val created = TestStreams.createStream("demo-events", 4)
      println(s"Created stream $created with 4 shards")
      created
    }

    val spark = SparkSession.builder().master("local[2]").appName("spark-kinesis demo")
      .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
      .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
      .getOrCreate()
    spark.sparkContext.setLogLevel("WARN")

    val reader = spark.readStream.format("aws-kinesis")
      .option("kinesis.streamName", stream)
      .option("kinesis.startingPosition", "TRIM_HORIZON")
    val source = if (local) {
      reader.option("kinesis.endpointUrl", KinesisMock.endpoint).option("kinesis.region", TestStreams.Region)
        .option("kinesis.awsAccessKeyId", TestStreams.AccessKeyId).option("kinesis.awsSecretKey", TestStreams.SecretKey)
    } else args.region.fold(reader)(r => reader.option("kinesis.region", r))

    val totals = source.load()
      .select(from_json(col("data").cast("string"), eventSchema).as("event"))
      .groupBy(col("event.eventType").as("eventType"))
      .agg(Map("*" -> "count", "event.amount" -> "sum"))
      .withColumnRenamed("count(1)", "events").withColumnRenamed("sum(event.amount AS amount)", "amount")
      .orderBy("eventType")

    val running = new AtomicBoolean(true)
    val producer = if (local) Some(startProducer(stream, running)) else None
    val query = totals.writeStream.outputMode("complete").format("console").option("truncate", "false")
      .trigger(Trigger.ProcessingTime("2 seconds")).start()

    val stopped = new CountDownLatch(1)
    Runtime.getRuntime.addShutdownHook(new Thread(new Runnable {
      override def run(): Unit = {
        running.set(false)
        if (query.isActive) query.stop()
        stopped.await(30, java.util.concurrent.TimeUnit.SECONDS)
      }
    }, "demo-shutdown"))
    println(s"Running for ${args.seconds} s (Ctrl-C stops earlier) ...")
    try {
      query.awaitTermination(args.seconds * 1000L)
      running.set(false)
      producer.foreach(_.join(10000L))
      if (query.isActive) query.stop()
      val produced = producer.map(_ => s", $sent events produced").getOrElse("")
      println(s"Stopped after ${Option(query.lastProgress).map(_.batchId + 1).getOrElse(0L)} micro-batches$produced.")
    } finally {
      spark.stop()
      stopped.countDown()
    }
  }

  @volatile private var sent = 0L

  private def startProducer(stream: String, running: AtomicBoolean): Thread = {
    val thread = new Thread(new Runnable {
      override def run(): Unit = {
        val random = new Random(42)
        val types = Vector("click", "view", "purchase", "signup")
        while (running.get()) {
          val batch = (1 to 20).map { _ =>
            val user = s"user-${random.nextInt(100)}"
            val json = s"""{"eventType":"${types(random.nextInt(types.size))}","userId":"$user",""" +
              f""""amount":${random.nextDouble() * 100}%.2f}"""
            user -> json.getBytes(UTF_8)
          }
          TestStreams.putRecords(stream, batch)
          sent += batch.size
          Thread.sleep(200)
        }
      }
    }, "demo-producer")
    thread.setDaemon(true)
    thread.start()
    thread
  }
}
