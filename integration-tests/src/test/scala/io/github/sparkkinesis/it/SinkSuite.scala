package io.github.sparkkinesis.it

import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.apache.spark.SparkException
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.it.SinkHarness._
import io.github.sparkkinesis.sink.KinesisForeachWriter

/**
 * Batch and streaming writes through the KPL (and the connector's own PutRecords calls) arrive in Kinesis exactly as
 * written, wherever the rows say.
 */
class SinkSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {
  import SparkHarness.session.implicits._

  /** `n` rows: payload "<prefix>-<i>", partition key "key-<i mod 97>", in `partitions` partitions. */
  private def rows(prefix: String, n: Int, partitions: Int = 4): DataFrame =
    spark.range(0, n, 1, partitions).select(
      concat(lit(s"$prefix-"), $"id").as("data"),
      concat(lit("key-"), ($"id" % 97).cast("string")).as("partitionKey"))

  private def expected(prefix: String, n: Int): Seq[(String, String)] =
    (0 until n).map(i => (s"key-${i % 97}", s"$prefix-$i"))

  test("a batch write of 5,000 rows arrives exactly once, and the producer packs rows into fewer Kinesis records") {
    // Given a stream with 4 shards
    val stream = TestStreams.createStream("sink-batch", 4)
    // When 5,000 rows are appended
    rows("batch", 5000).write.format("aws-kinesis").options(sinkOptions(Some(stream))).mode("append").save()
    // Then each row is in the stream once
    RecordChecks.assertExactlyOnce(expected("batch", 5000), keyed(readBack(stream)._1), s"rows in $stream")
    // And once the KPL has loaded the stream's shard map (until then it sends rows one per record), a write of
    // 1,000 rows lands in fewer Kinesis records than rows
    val writes = Iterator.from(1).map { attempt =>
      val before = readBack(stream)._2
      rows(s"packed-$attempt", 1000).write.format("aws-kinesis").options(sinkOptions(Some(stream))).mode("append")
        .save()
      (attempt, readBack(stream)._2 - before)
    }
    val (packedAt, records) = writes.find { case (attempt, records) => records < 1000 || attempt == 5 }.get
    withClue(s"Kinesis records for 1,000 rows in write $packedAt: ") { records should be < 1000 }
    RecordChecks.assertExactlyOnce(
      expected("batch", 5000) ++ (1 to packedAt).flatMap(a => expected(s"packed-$a", 1000)),
      keyed(readBack(stream)._1),
      s"rows in $stream")
  }

  test("binary data without aggregation, in the default save mode, arrives one Kinesis record per row") {
    // Given a stream and 2,000 binary rows
    val stream = TestStreams.createStream("sink-binary", 2)
    val binary = rows("binary", 2000).select($"data".cast("binary").as("data"), $"partitionKey")
    // When they are written in the default mode (error if exists, which for a stream means append)
    binary.write.format("aws-kinesis").options(sinkOptions(Some(stream), "kinesis.sink.aggregationEnabled" -> "false"))
      .save()
    // Then each row is its own Kinesis record
    val (landed, kinesisRecords) = readBack(stream)
    RecordChecks.assertExactlyOnce(expected("binary", 2000), keyed(landed), s"rows in $stream")
    kinesisRecords shouldBe 2000
  }

  test("Given kinesis.sink.producer=PutRecords on the emulator's plain HTTP port, when rows are written in a batch " +
    "and a stream, then each arrives exactly once, one Kinesis record per row, each key's rows in their order") {
    // Given a stream of 4 shards, the sink writing with the connector's own PutRecords calls over plain HTTP
    val stream = TestStreams.createStream("sink-put-records", 4)
    val options = sinkOptions(
      Some(stream),
      "kinesis.endpointUrl" -> KinesisMock.endpoint,
      "kinesis.sink.producer" -> "PutRecords",
      "kinesis.sink.maxConnections" -> "4")
    val input = newDir("put-records-input")
    (0 until 3).foreach { file =>
      rows(s"put-stream-$file", 1000, partitions = 1).write.mode("append").json(
        new java.io.File(input, s"f$file").getPath)
    }

    // When one task writes 5,000 rows in a batch, and a streaming query 3,000 more in three micro-batches
    rows("put-batch", 5000, partitions = 1).write.format("aws-kinesis").options(options).mode("append").save()
    val query = spark.readStream.schema("data string, partitionKey string").option("maxFilesPerTrigger", "1")
      .json(new java.io.File(input, "f*").getPath)
      .writeStream.format("aws-kinesis").options(options).option("checkpointLocation", newCheckpointDir())
      .trigger(Trigger.AvailableNow()).start()
    query.awaitTermination(120.seconds.toMillis) shouldBe true
    query.exception shouldBe None

    // Then every row is in the stream once, each in a Kinesis record of its own
    val (landed, kinesisRecords) = readBack(stream)
    RecordChecks.assertExactlyOnce(
      expected("put-batch", 5000) ++ (0 until 3).flatMap(f => expected(s"put-stream-$f", 1000)),
      keyed(landed),
      s"rows in $stream")
    kinesisRecords shouldBe 8000
    // And the batch task's rows of each key lie in their shard in the order the task wrote them
    landed.filter(_.payload.startsWith("put-batch-")).groupBy(_.partitionKey).foreach { case (key, ofKey) =>
      val ids = ofKey.map(_.payload.stripPrefix("put-batch-").toInt)
      withClue(s"rows of key $key in shard order: ")(ids shouldBe ids.sorted)
    }
  }

  test("a streaming write of three micro-batches arrives exactly once") {
    // Given three JSON files of 1,000 rows each, read one file per micro-batch
    val stream = TestStreams.createStream("sink-streaming", 4)
    val input = newDir("json-input")
    (0 until 3).foreach { file =>
      rows(s"stream-$file", 1000, partitions = 1).write.mode("append").json(new java.io.File(input, s"f$file").getPath)
    }
    val source = spark.readStream.schema("data string, partitionKey string").option("maxFilesPerTrigger", "1")
      .json(new java.io.File(input, "f*").getPath)
    // When a streaming query writes them to Kinesis until the input is used up
    val query = source.writeStream.format("aws-kinesis").options(sinkOptions(Some(stream)))
      .option("checkpointLocation", newCheckpointDir()).trigger(Trigger.AvailableNow()).start()
    query.awaitTermination(120.seconds.toMillis) shouldBe true
    query.exception shouldBe None
    // Then every row is in the stream once, written by three micro-batches
    RecordChecks.assertExactlyOnce(
      (0 until 3).flatMap(f => expected(s"stream-$f", 1000)),
      keyed(readBack(stream)._1),
      s"rows in $stream")
    query.recentProgress.count(_.numInputRows > 0) shouldBe 3
  }

  test("a streaming write of three micro-batches through KinesisForeachWriter arrives exactly once") {
    // Given three JSON files of 1,000 rows each, read one file per micro-batch
    val stream = TestStreams.createStream("sink-foreach", 2)
    val input = newDir("json-input")
    (0 until 3).foreach { file =>
      rows(s"foreach-$file", 1000, partitions = 2).write.mode("append").json(new java.io.File(input, s"f$file").getPath)
    }
    val source = spark.readStream.schema("data string, partitionKey string").option("maxFilesPerTrigger", "1")
      .json(new java.io.File(input, "f*").getPath)
    // When a streaming query writes them through the sink's ForeachWriter until the input is used up
    val query = source.writeStream.foreach(KinesisForeachWriter(sinkOptions(Some(stream)), source.schema))
      .option("checkpointLocation", newCheckpointDir()).trigger(Trigger.AvailableNow()).start()
    query.awaitTermination(120.seconds.toMillis) shouldBe true
    query.exception shouldBe None
    // Then every row is in the stream once
    RecordChecks.assertExactlyOnce(
      (0 until 3).flatMap(f => expected(s"foreach-$f", 1000)),
      keyed(readBack(stream)._1),
      s"rows in $stream")
  }

  test("rows written by the sink come back unchanged through the aws-kinesis source") {
    // Given 3,000 rows written by the sink
    val stream = TestStreams.createStream("sink-roundtrip", 3)
    rows("round", 3000).write.format("aws-kinesis").options(sinkOptions(Some(stream))).mode("append").save()
    // When the source reads the stream from its start
    val (query, collected) = startCollecting(readKinesis(stream, "TRIM_HORIZON"))
    collected.awaitRecords(query, 3000, 90.seconds)
    query.processAllAvailable()
    // Then it delivers each row once, with its partition key and payload
    RecordChecks.assertExactlyOnce(
      expected("round", 3000),
      collected.records.map(r => (r.partitionKey, r.payload)),
      "rows read back by the source")
  }

  test("Given no kinesis.streamName, when rows name streams, then each goes to its own, in its explicit hash " +
    "key's shard") {
    // Given two streams of 2 shards
    val (first, second) = (TestStreams.createStream("sink-row-a", 2), TestStreams.createStream("sink-row-b", 2))
    val maxHashKey = (BigInt(1) << 128) - 1
    // When rows name the first stream (hash key 0) or the second (the highest hash key), without the option
    val df = spark.range(0, 2000, 1, 3).select(
      concat(lit("routed-"), $"id").as("data"),
      concat(lit("key-"), ($"id" % 97).cast("string")).as("partitionKey"),
      when($"id" % 2 === 0, lit(first)).otherwise(lit(second)).as("streamName"),
      when($"id" % 2 === 0, lit("0")).otherwise(lit(maxHashKey.toString)).as("explicitHashKey"))
    df.write.format("aws-kinesis").options(sinkOptions(None)).mode("append").save()
    // Then each stream holds its rows, and the hash keys chose the first and the last shard
    def want(remainder: Int) = expected("routed", 2000).zipWithIndex.collect { case (r, i) if i % 2 == remainder => r }
    val (inFirst, inSecond) = (readBack(first)._1, readBack(second)._1)
    RecordChecks.assertExactlyOnce(want(0), keyed(inFirst), s"rows in $first")
    RecordChecks.assertExactlyOnce(want(1), keyed(inSecond), s"rows in $second")
    inFirst.map(_.shardId).distinct shouldBe Seq(TestStreams.openShards(first).head.shardId())
    inSecond.map(_.shardId).distinct shouldBe Seq(TestStreams.openShards(second).last.shardId())
  }

  test("Given a DataFrame read from one stream, when it is written as it is with kinesis.streamName naming " +
    "another, then every row lands there and none goes back to the source") {
    // Given 500 records in a source stream
    val (source, target) = (TestStreams.createStream("sink-from", 2), TestStreams.createStream("sink-to", 2))
    val records = TestStreams.testRecords("piped", 500, 97)
    TestStreams.putStrings(source, records)
    // When a streaming query writes the source's DataFrame, streamName column and all, to the target stream
    val query = readKinesis(source, "TRIM_HORIZON").writeStream.format("aws-kinesis")
      .options(sinkOptions(Some(target))).option("checkpointLocation", newCheckpointDir()).start()
    try {
      Eventually.await(
        "the records to reach the target stream",
        90.seconds,
        s"rows in $target so far: ${readBack(target)._1.size}") {
        readBack(target)._1.size >= records.size
      }
      query.processAllAvailable()
    } finally query.stop()
    // Then the target holds each record once, and the source still holds only what was put there
    RecordChecks.assertExactlyOnce(records, keyed(readBack(target)._1), s"rows in $target")
    RecordChecks.assertExactlyOnce(records, keyed(readBack(source)._1), s"rows in $source")
  }

  test("Given a write task in flight, when another job's row is too large once its partition key counts, then " +
    "that job fails naming the sizes and the first write completes through the same producer") {
    // Given a write of one task that pauses at row 1,000, having handed 1,000 rows to the executor's producer
    val stream = TestStreams.createStream("sink-isolated", 2)
    val gate = RowGate.pausingAt(1000L)
    val good = spark.range(0, 3000, 1, 1).select(
      concat(lit("good-"), gate.udf($"id").cast("string")).as("data"),
      concat(lit("key-"), ($"id" % 97).cast("string")).as("partitionKey"))
    val goodWrite = Future(good.write.format("aws-kinesis").options(sinkOptions(Some(stream))).mode("append").save())
    gate.reached.await(60, TimeUnit.SECONDS) shouldBe true
    // When another job, on the other core, writes a row of 1 MiB of data and a 5-character partition key
    val bad = intercept[SparkException] {
      spark.range(0, 1, 1, 1).select(lit("x" * (1024 * 1024)).as("data"), lit("key-1").as("partitionKey"))
        .write.format("aws-kinesis").options(sinkOptions(Some(stream))).mode("append").save()
    }
    gate.release.countDown()
    // Then that job fails, saying why
    Iterator.iterate[Throwable](bad)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ") should
      (include("1048581 bytes together") and include("limit of 1024 KiB"))
    // And the first write completes, every row in the stream once
    Await.result(goodWrite, 120.seconds)
    RecordChecks.assertExactlyOnce(expected("good", 3000), keyed(readBack(stream)._1), s"rows in $stream")
  }

  test("a missing stream fails the write before any row is sent, naming the stream and what to do") {
    val missing = "sink-no-such-stream"
    val e = intercept[Exception] {
      rows("lost", 10).write.format("aws-kinesis").options(sinkOptions(Some(missing))).mode("append").save()
    }
    e.getMessage should (include(s"'$missing'") and include("does not exist") and include("kinesis.streamName"))
  }

  test("a row naming a missing stream fails its task, naming the stream") {
    val e = intercept[SparkException] {
      rows("lost", 10).withColumn("streamName", lit("sink-row-no-such-stream"))
        .write.format("aws-kinesis").options(sinkOptions(None)).mode("append").save()
    }
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ") should
      (include("'sink-row-no-such-stream'") and include("does not exist"))
  }

  test("missing or mistyped columns fail when the write is analysed, naming the column") {
    val stream = TestStreams.createStream("sink-columns", 1)
    def write(df: DataFrame) =
      intercept[IllegalArgumentException](df.write.format("aws-kinesis").options(sinkOptions(Some(stream))).save())
        .getMessage
    write(rows("c", 1).drop("partitionKey")) should include("no 'partitionKey' column")
    write(rows("c", 1).withColumn("data", lit(1))) should (include("'data'") and include("string or binary"))
    write(rows("c", 1).withColumn("explicitHashKey", lit(1))) should include("'explicitHashKey'")
    intercept[IllegalArgumentException](rows("c", 1).write.format("aws-kinesis")
      .options(sinkOptions(None)).save()).getMessage should include("kinesis.streamName")
  }

  test("overwrite is refused with a message that says a stream is append-only") {
    val stream = TestStreams.createStream("sink-overwrite", 1)
    val e = intercept[Exception](rows("o", 1).write.format("aws-kinesis").options(sinkOptions(Some(stream)))
      .mode("ignore").save())
    e.getMessage should include("append-only")
  }

  test("a write forced onto Spark's V1 write path fails, naming the setting to change, instead of looping") {
    val stream = TestStreams.createStream("sink-v1", 1)
    val key = "spark.sql.sources.useV1SourceList"
    val before = spark.conf.getOption(key)
    spark.conf.set(key, "avro,csv,json,kafka,orc,parquet,text,aws-kinesis")
    try {
      val e = intercept[Exception](rows("v1", 1).write.format("aws-kinesis").options(sinkOptions(Some(stream))).save())
      e.getMessage should include(key)
    } finally before.fold(spark.conf.unset(key))(spark.conf.set(key, _))
  }
}
