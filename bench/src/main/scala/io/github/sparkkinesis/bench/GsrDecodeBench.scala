package io.github.sparkkinesis.bench

import java.io.ByteArrayOutputStream
import java.lang.management.ManagementFactory
import java.util.UUID

import scala.collection.JavaConverters._

import org.apache.avro.Schema
import org.apache.avro.generic.{GenericData, GenericDatumWriter, GenericRecord}
import org.apache.avro.io.EncoderFactory
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.avro.functions.from_avro
import org.apache.spark.sql.functions.{col, from_json}

import io.github.sparkkinesis.it.{MotoGlue, ProtobufWire}
import io.github.sparkkinesis.it.GsrFrames.frame
import io.github.sparkkinesis.payloads.functions.from_glue_schema_registry

/**
 * Decode rate on one core (local[1]): `from_glue_schema_registry` on GSR-framed Avro records against Spark's
 * `from_avro` with the same schema fixed, and on records of an older writer version against `from_avro` given both
 * schemas (Avro's resolution on both sides); on GSR-framed JSON Schema records against Spark's `from_json` with the
 * reader's struct, on the same payloads (without the frame's 18 bytes), in the same run; and on the same orders as GSR
 * Protobuf records (no reference: Spark's `from_protobuf` needs a compiled descriptor). The records are cached in
 * memory first, so each measures decoding only. Each decoder is warmed up, then the decoders run alternately, round
 * after round, each round in a different order; the median rate (per second of the task thread's CPU time, and of wall
 * time) and its spread are printed, with each decoder's ratio to the reference's rate in the same round. Needs moto
 * (MOTO_ENDPOINT, or starts its own).
 *
 * build/sbt "bench/runMain io.github.sparkkinesis.bench.GsrDecodeBench [records] [rounds] [formats]" (formats:
 * avro,avro-evolution,json,protobuf, all by default)
 */
object GsrDecodeBench {

  private val schema = new Schema.Parser().parse(
    """{"type":"record","name":"Order","namespace":"bench","fields":[
      |{"name":"id","type":"string"},{"name":"customer","type":"string"},{"name":"amount","type":"long"},
      |{"name":"price","type":"double"},{"name":"quantity","type":"int"},{"name":"express","type":"boolean"},
      |{"name":"note","type":["null","string"],"default":null},
      |{"name":"tags","type":{"type":"array","items":"string"}}]}""".stripMargin)

  /** The order's next version: a field added, with a default, which records of the first version read as. */
  private val nextVersion = new Schema.Parser().parse(schema.toString.dropRight(2) +
    """,{"name":"channel","type":"string","default":"web"}]}""")

  /** The same order as a .proto definition (note optional, so that its absence is null as in Avro). */
  private val proto =
    """syntax = "proto3";
      |package bench;
      |message Order { string id = 1; string customer = 2; int64 amount = 3; double price = 4; int32 quantity = 5;
      |  bool express = 6; optional string note = 7; repeated string tags = 8; }""".stripMargin

  /** Untimed rounds of each decoder before the timed ones: the JIT compiles the hot paths of every decoder alike. */
  private val WarmUpRounds = 3

  def main(args: Array[String]): Unit = {
    val records = args.headOption.map(_.toInt).getOrElse(1000000)
    val rounds = args.lift(1).map(_.toInt).getOrElse(7)
    val formats =
      args.lift(2).fold(Set("avro", "avro-evolution", "json", "protobuf"))(_.split(',').map(_.trim).toSet)
    val spark = SparkSession.builder().master("local[1]").appName("gsr-decode-bench")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate()
    try {
      val registry = s"bench-${UUID.randomUUID.toString.take(8)}"
      MotoGlue.createRegistry(registry)
      // moto holds at most 10 registries: this run's goes when it ends.
      try decodeAll(Run(spark, registry, records, rounds), formats)
      finally MotoGlue.call("DeleteRegistry", s"""{"RegistryId": {"RegistryName": "$registry"}}""")
    } finally spark.stop()
  }

  /** What every comparison of a run shares: its session, its registry, the number of records and of rounds. */
  private final case class Run(spark: SparkSession, registry: String, records: Int, rounds: Int) {

    /**
     * Compares the GSR decoder of schema `name` with `references` (made knowing the rows) on `records` payloads framed
     * with `versionId`, cached for this comparison only.
     */
    def compare(title: String, name: String, versionId: UUID, payload: Int => Array[Byte])(
        references: DataFrame => Seq[(String, Column)]): Unit = {
      val rows = cached(spark, records, versionId, payload)
      try
        GsrDecodeBench.compare(
          s"$title, $records records",
          rows,
          rounds,
          from_glue_schema_registry(col("framed"), registry, name, failFast),
          references(rows): _*)
      finally rows.unpersist()
    }
  }

  private def decodeAll(run: Run, formats: Set[String]): Unit = {
    import run.registry
    if (formats("avro"))
      run.compare(
        "GSR Avro decode against from_avro",
        "orders",
        MotoGlue.createSchema(registry, "orders", schema.toString),
        payload)(_ => Seq("from_avro (fixed schema)" -> from_avro(col("payload"), schema.toString)))
    if (formats("avro-evolution")) {
      // Written with the order's schema, read as its next version (a field added, with a default): Avro's resolution.
      val writerId = MotoGlue.createSchema(registry, "orders-evolved", schema.toString)
      MotoGlue.registerVersion(registry, "orders-evolved", nextVersion.toString)
      val readAs = Map("avroSchema" -> nextVersion.toString).asJava
      run.compare("GSR Avro decode of an older writer version against from_avro", "orders-evolved", writerId, payload)(
        _ => Seq("from_avro (writer and reader schema)" -> from_avro(col("payload"), schema.toString, readAs)))
    }
    if (formats("json"))
      run.compare(
        "GSR JSON Schema decode against from_json",
        "orders-json",
        MotoGlue.createSchema(registry, "orders-json", jsonSchema, "JSON"),
        jsonPayload) { rows =>
        val readerType =
          rows.select(from_glue_schema_registry(col("framed"), registry, "orders-json", failFast)).schema.head.dataType
        Seq("from_json (same struct)" ->
          from_json(col("payload").cast("string"), readerType, Map("mode" -> "FAILFAST")))
      }
    if (formats("protobuf"))
      run.compare(
        "GSR Protobuf decode",
        "orders-proto",
        MotoGlue.createSchema(registry, "orders-proto", proto, "PROTOBUF"),
        protobufPayload)(_ => Nil)
  }

  /** FAILFAST, so that a record not decoded fails the run rather than making a fast null. */
  private val failFast = MotoGlue.functionOptions + ("mode" -> "FAILFAST")

  /** `records` rows of `framed` (the payload GSR-framed with `versionId`) and bare `payload`, cached in memory. */
  private def cached(spark: SparkSession, records: Int, versionId: UUID, payload: Int => Array[Byte]): DataFrame = {
    import spark.implicits._
    // Built by a task rather than from a local collection, which every task would then carry.
    val rows = spark.range(records).as[Long].map { i =>
      val p = payload(i.toInt)
      (frame(versionId, p), p)
    }.toDF("framed", "payload").cache()
    rows.count()
    rows
  }

  /**
   * Prints, for `gsr` and each `reference` decoder on `rows`, the median rate of `rounds` timed rounds with its spread,
   * and its ratio to the first reference's rate of the same round: rows per second of the task thread's CPU time (what
   * the load of other processes on the machine changes least), then of wall time, and the collectors' pause time. Every
   * decoder runs [[WarmUpRounds]] untimed rounds first; then each round runs every decoder once, starting with a
   * different one each round, so that neither the machine's load nor the collection of another's garbage falls on one
   * decoder more than on the others.
   */
  private def compare(title: String, rows: DataFrame, rounds: Int, gsr: Column, references: (String, Column)*): Unit = {
    val records = rows.count()
    val bytes = rows.selectExpr("sum(length(payload))").head().getLong(0)
    val decoders = ("from_glue_schema_registry" -> gsr) +: references
    println(s"$title of ${bytes / records} bytes, local[1]: $WarmUpRounds untimed rounds of each decoder, then " +
      s"$rounds rounds, decoders alternated; median (min-max) rows/s on one core")
    for (_ <- 1 to WarmUpRounds; (_, decode) <- decoders) measure(rows, decode, records)
    val byRound = (0 until rounds).map { round =>
      val order = decoders.indices.map(i => (i + round) % decoders.size)
      order.map(i => i -> measure(rows, decoders(i)._2, records)).sortBy(_._1).map(_._2)
    }
    val width = decoders.map(_._1.length).max
    decoders.map(_._1).zipWithIndex.foreach { case (name, i) =>
      val runs = byRound.map(_(i))
      def ratio(of: Rates => Double): String =
        if (references.isEmpty || i == 1) " " * 18
        else spread(byRound.map(r => of(r(i)) / of(r(1))), "%.2f")
      println(s"  ${name.padTo(width, ' ')}  CPU ${spread(runs.map(_.cpu), "%,.0f")}  ${ratio(_.cpu)}  " +
        s"wall ${spread(runs.map(_.wall), "%,.0f")}  ${ratio(_.wall)}  " + f"GC ${median(runs.map(_.gcMillis))}%.0f ms")
    }
    if (references.nonEmpty) println(s"  (ratios: to ${references.head._1}, round by round)")
  }

  private def spread(values: Seq[Double], format: String): String =
    s"${format.format(median(values))} (${format.format(values.min)}-${format.format(values.max)})"

  private def median(values: Seq[Double]): Double = {
    val sorted = values.sorted
    if (sorted.size % 2 == 1) sorted(sorted.size / 2) else (sorted(sorted.size / 2 - 1) + sorted(sorted.size / 2)) / 2
  }

  /** One decoder's run: rows per second of its task thread's CPU time and of wall time, and the collectors' pauses. */
  private final case class Rates(cpu: Double, wall: Double, gcMillis: Double)

  /** Decodes every row of `rows` with `decode` into the noop sink, after a collection of the garbage before it. */
  private def measure(rows: DataFrame, decode: Column, records: Long): Rates = {
    System.gc()
    val (cpuBefore, gcBefore) = (taskThreadsCpu(), gcMillis())
    val start = System.nanoTime()
    rows.select(decode.as("o")).write.format("noop").mode("overwrite").save()
    val wall = System.nanoTime() - start
    val cpuAfter = taskThreadsCpu()
    val cpu = cpuAfter.map { case (id, nanos) => nanos - cpuBefore.getOrElse(id, 0L) }.sum
    Rates(records / (cpu / 1e9), records / (wall / 1e9), (gcMillis() - gcBefore).toDouble)
  }

  /** CPU nanoseconds of each executor task thread so far (local mode runs them in this JVM), by thread id. */
  private def taskThreadsCpu(): Map[Long, Long] = {
    val threads = ManagementFactory.getThreadMXBean
    threads.getThreadInfo(threads.getAllThreadIds).toSeq
      // "Executor task launch worker-0" or "... for task 1.0 in stage ...", "Executor task idle worker#3" on Spark 4.
      .filter(t => t != null && t.getThreadName.startsWith("Executor task "))
      .map(t => t.getThreadId -> threads.getThreadCpuTime(t.getThreadId)).filter(_._2 >= 0).toMap
  }

  private def gcMillis(): Long = ManagementFactory.getGarbageCollectorMXBeans.asScala.map(_.getCollectionTime).sum

  private def payload(i: Int): Array[Byte] = {
    val r = new GenericData.Record(schema)
    r.put("id", s"order-$i")
    r.put("customer", s"customer-${i % 1000}")
    r.put("amount", i.toLong * 100)
    r.put("price", i * 0.25)
    r.put("quantity", i % 7)
    r.put("express", i % 2 == 0)
    r.put("note", if (i % 3 == 0) null else "leave at the door")
    r.put("tags", java.util.Arrays.asList("a", "b"))
    val out = new ByteArrayOutputStream()
    val encoder = EncoderFactory.get().binaryEncoder(out, null)
    new GenericDatumWriter[GenericRecord](schema).write(r, encoder)
    encoder.flush()
    out.toByteArray
  }

  /** Order `i` as the Protobuf payload (message index 0): the same values as [[payload]]. */
  private def protobufPayload(i: Int): Array[Byte] = {
    val note = if (i % 3 == 0) Nil else Seq(7 -> "leave at the door")
    val fields = Seq(
      1 -> s"order-$i",
      2 -> s"customer-${i % 1000}",
      3 -> i.toLong * 100,
      4 -> i * 0.25,
      5 -> i % 7,
      6 -> (i % 2 == 0)) ++ note ++ Seq(8 -> "a", 8 -> "b")
    ProtobufWire.payload(0, fields: _*)
  }

  /** The order's JSON Schema: the Avro schema's fields, tags an array of strings, note a string or null. */
  private val jsonSchema =
    """{"type": "object", "properties": {"id": {"type": "string"}, "customer": {"type": "string"},
      |"amount": {"type": "integer"}, "price": {"type": "number"}, "quantity": {"type": "integer"},
      |"express": {"type": "boolean"}, "note": {"type": ["string", "null"]},
      |"tags": {"type": "array", "items": {"type": "string"}}}}""".stripMargin

  private def jsonPayload(i: Int): Array[Byte] = {
    val note = if (i % 3 == 0) "null" else "\"leave at the door\""
    (s"""{"id":"order-$i","customer":"customer-${i % 1000}","amount":${i.toLong * 100},"price":${i * 0.25},""" +
      s""""quantity":${i % 7},"express":${i % 2 == 0},"note":$note,"tags":["a","b"]}""").getBytes("UTF-8")
  }
}
