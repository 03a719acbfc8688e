package io.github.sparkkinesis.bench

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.{DeflaterOutputStream, GZIPOutputStream}

import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.functions.{array, col, element_at, from_json, hash, lit, sum}
import org.apache.spark.sql.types.StructType

import io.github.sparkkinesis.payloads.functions.{cloudwatch_logs, decompress, dynamodb_change}

/**
 * Decoding rate of the payload functions (`bench/run --only payloads [rows]`): rows per second on one core (a
 * `local[1]` session) for each function and for Spark's `from_json` on the same payloads, in the same run. The rows
 * cycle through 64 distinct payloads picked by row id, so nothing is constant-folded; each result is hashed whole, so
 * that no field is pruned from either side. Best of three runs per query, after one warm-up run.
 */
object PayloadBench {

  private val distinct = 64

  def main(args: Array[String]): Unit = {
    val rows = args.headOption.map(_.toLong).getOrElse(200000L)
    val spark = SparkSession.builder().master("local[1]").appName("payload-bench")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate()
    try {
      val logs = (0 until distinct).map(i => utf8(cloudWatchMessage(i)))
      val changes = (0 until distinct).map(i => utf8(dynamoDbChange(i)))
      val cases = Seq(
        ("cloudwatch_logs, gzip", logs.map(gzip), cloudwatch_logs(col("data"))),
        ("cloudwatch_logs, uncompressed JSON", logs, cloudwatch_logs(col("data"))),
        ("from_json, uncompressed JSON (CloudWatch schema)", logs, fromJson(CloudWatchJsonSchema)),
        (
          "from_json(decompress gzip) (CloudWatch schema)",
          logs.map(gzip),
          from_json(decompress(col("data"), "gzip").cast("string"), StructType.fromDDL(CloudWatchJsonSchema))),
        ("dynamodb_change (typed images)", changes, dynamodb_change(col("data"), ItemSchema, "PERMISSIVE")),
        ("from_json (DynamoDB JSON as nested strings)", changes, fromJson(DynamoDbJsonSchema)),
        ("decompress gzip", changes.map(gzip), decompress(col("data"), "gzip")),
        ("decompress zlib", changes.map(zlib), decompress(col("data"), "zlib")),
        ("decompress zstd", changes.map(b => com.github.luben.zstd.Zstd.compress(b)), decompress(col("data"), "zstd")))
      println(s"payloads: $rows rows per query, one core (local[1]), best of 3 after a warm-up; " +
        s"${Runtime.getRuntime.availableProcessors} cores on this machine")
      cases.foreach { case (name, payloads, decode) =>
        val input = records(spark, payloads, rows)
        val rate = (0 to 3).map(_ => rowsPerSecond(input, decode, rows)).tail.max
        println(
          f"payloads: $name%-52s ${rate / 1000}%8.1f k rows/s  (${payloads.map(_.length).sum / distinct} B/record)")
      }
    } finally spark.stop()
  }

  private def rowsPerSecond(input: DataFrame, decode: Column, rows: Long): Double = {
    val start = System.nanoTime()
    input.select(sum(hash(decode))).collect()
    rows / ((System.nanoTime() - start) / 1e9)
  }

  /** `rows` rows whose `data` cycles through `payloads` by id. */
  private def records(spark: SparkSession, payloads: Seq[Array[Byte]], rows: Long): DataFrame =
    spark.range(rows).select(element_at(array(payloads.map(p => lit(p)): _*), (col("id") % distinct + 1).cast("int"))
      .as("data"))

  private def fromJson(schema: String): Column = from_json(col("data").cast("string"), StructType.fromDDL(schema))

  private val CloudWatchJsonSchema = "messageType STRING, owner STRING, logGroup STRING, logStream STRING, " +
    "subscriptionFilters ARRAY<STRING>, logEvents ARRAY<STRUCT<id: STRING, timestamp: BIGINT, message: STRING>>"
  private val ItemSchema = "pk STRING, sk BIGINT, status STRING, total DECIMAL(12,2), qty INT, tags ARRAY<STRING>, " +
    "address STRUCT<city: STRING, zip: STRING>"
  private val DynamoDbJsonSchema = "eventName STRING, eventID STRING, tableName STRING, dynamodb STRUCT<" +
    "ApproximateCreationDateTime: BIGINT, Keys: STRUCT<pk: STRUCT<S: STRING>, sk: STRUCT<N: STRING>>, " +
    "NewImage: STRUCT<pk: STRUCT<S: STRING>, sk: STRUCT<N: STRING>, status: STRUCT<S: STRING>, " +
    "total: STRUCT<N: STRING>, qty: STRUCT<N: STRING>, tags: STRUCT<SS: ARRAY<STRING>>, " +
    "address: STRUCT<M: STRUCT<city: STRUCT<S: STRING>, zip: STRUCT<S: STRING>>>>>"

  /** A data message of 10 log events of about 120 characters each, as a subscription filter writes it. */
  private def cloudWatchMessage(i: Int): String = {
    val events = (0 until 10).map { e =>
      s"""{"id":"3784529173647128019651835541201151935811762570201463${1000 + e}",""" +
        s""""timestamp":${1764201600000L + i * 10 + e},"message":"2026-11-27T00:00:00Z INFO request $i.$e """ +
        s"""handled in ${e * 7} ms path=/api/orders/$i status=200"}"""
    }
    s"""{"messageType":"DATA_MESSAGE","owner":"111122223333","logGroup":"/aws/lambda/checkout",""" +
      s""""logStream":"2026/11/27/[$$LATEST]$i","subscriptionFilters":["to-kinesis"],"logEvents":[${events.mkString(
          ",")}]}"""
  }

  /** A MODIFY of an item of seven attributes, both images. */
  private def dynamoDbChange(i: Int): String = {
    def image(status: String) =
      s"""{"pk":{"S":"order#$i"},"sk":{"N":"${1764201600 + i}"},"status":{"S":"$status"},"total":{"N":"${i}9.90"},""" +
        s""""qty":{"N":"$i"},"tags":{"SS":["gift","prio$i"]},""" +
        s""""address":{"M":{"city":{"S":"Lyon"},"zip":{"S":"6900$i"}}}}"""
    s"""{"awsRegion":"eu-west-3","dynamodb":{"ApproximateCreationDateTime":${1764201600123456L + i},""" +
      s""""Keys":{"pk":{"S":"order#$i"},"sk":{"N":"${1764201600 + i}"}},"NewImage":${image("paid")},""" +
      s""""OldImage":${image("new")},"SizeBytes":300,"ApproximateCreationDateTimePrecision":"MICROSECOND"},""" +
      s""""eventID":"e-$i","eventName":"MODIFY","userIdentity":null,"recordFormat":"application/json",""" +
      s""""tableName":"Orders","eventSource":"aws:dynamodb"}"""
  }

  private def utf8(text: String): Array[Byte] = text.getBytes(UTF_8)

  private def gzip(bytes: Array[Byte]): Array[Byte] = compress(bytes, new GZIPOutputStream(_))
  private def zlib(bytes: Array[Byte]): Array[Byte] = compress(bytes, new DeflaterOutputStream(_))

  private def compress(bytes: Array[Byte], stream: ByteArrayOutputStream => java.io.OutputStream): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val compressing = stream(out)
    compressing.write(bytes)
    compressing.close()
    out.toByteArray
  }
}
