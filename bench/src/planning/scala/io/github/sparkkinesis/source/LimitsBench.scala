package io.github.sparkkinesis.source

import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import org.apache.logging.log4j.Level
import org.apache.logging.log4j.core.config.Configurator

import io.github.sparkkinesis.aggregation.KplTestAggregates
import io.github.sparkkinesis.client.{AwsLimits, LimitedKinesis}
import io.github.sparkkinesis.source.LimitsReaders.RowCount

/**
 * The connector's read rate against AWS's own per-shard limits, on an in-process Kinesis that keeps them in real time
 * ([[LimitedKinesis]]; no network, no emulator): a backlog of `seconds` of 1-KiB records per shard at 2 MiB/s, plain or
 * in KPL aggregates of 49 user records (about 50 KB, the KPL's default aggregate size), read from TRIM_HORIZON by each
 * reader of [[LimitsReaders]]. Per run: the time, MiB/s per shard, the share of the limits' best time, GetRecords calls
 * served and throttled, and the whole JVM's CPU seconds per GiB of data turned into rows. Run by `bench/run --only
 * limits [shardCounts [seconds [readers [K=V ...]]]]` (K=V: connector options); prints figures only.
 */
object LimitsBench {

  private val RecordBytes = 1024
  private val UsersPerAggregate = 49
  private val Readers = Seq("raw", "micro-batch", "real-time", "fan-out micro-batch", "fan-out real-time")

  def main(args: Array[String]): Unit = {
    val shardCounts = args.lift(0).fold(Seq(1, 24, 200))(_.split(',').toSeq.map(_.toInt))
    val seconds = args.lift(1).fold(20)(_.toInt)
    val readers = args.lift(2).fold(Readers)(_.split(',').toSeq)
    val extra = args.drop(3).map(_.split("=", 2)).map { case Array(k, v) => k -> v }.toMap
    val cores = Runtime.getRuntime.availableProcessors()
    Configurator.setRootLevel(Level.WARN) // the connector's INFO lines per batch and subscription
    // Untimed: class loading, the projection's code generation and the JIT's first compilations.
    Seq("micro-batch", "real-time", "fan-out real-time").foreach(r => run(4, 12, aggregated = false, r, cores, extra))
    println(s"limits: backlog of $seconds s at 2 MiB/s per shard, 1-KiB records, AWS's limits in real time, " +
      s"$cores task slots (cores)")
    println(f"${"shards"}%6s ${"records"}%10s ${"reader"}%-20s ${"s"}%7s ${"MiB/s/sh"}%8s ${"of limit"}%8s " +
      f"${"calls"}%7s ${"thrott"}%7s ${"debt"}%6s ${"CPU s/GiB"}%9s ${"load"}%5s")
    for (shards <- shardCounts; aggregated <- Seq(false, true); reader <- readers) {
      println(run(shards, seconds, aggregated, reader, cores, extra))
    }
  }

  private def run(
      shards: Int,
      seconds: Int,
      aggregated: Boolean,
      reader: String,
      cores: Int,
      extra: Map[String, String]): String = {
    val limits = AwsLimits()
    val (data, rowsPerRecord) =
      if (aggregated) (
        KplTestAggregates.aggregate((0 until UsersPerAggregate).map(i =>
          (s"key-$i", None, Array.fill[Byte](RecordBytes)(i.toByte)))),
        UsersPerAggregate)
      else (Array.fill[Byte](RecordBytes)('x'.toByte), 1)
    val recordsPerShard = math.max(1L, seconds * limits.readBytesPerSecond / data.length).toInt
    val kinesis = new LimitedKinesis("s", shards, recordsPerShard, data, limits)
    val expected = shards.toLong * recordsPerShard * (if (reader == "raw") 1 else rowsPerRecord)
    val count = new RowCount
    System.gc()
    val cpuBefore = processCpuNanos()
    val started = System.nanoTime()
    reader match {
      case "raw" => LimitsReaders.raw(kinesis, count)
      case "micro-batch" =>
        LimitsReaders.microBatch(kinesis, LimitsReaders.options(false, extra), cores, expected, count)
      case "real-time" => LimitsReaders.realTime(kinesis, LimitsReaders.options(false, extra), cores, expected, count)
      case "fan-out micro-batch" =>
        LimitsReaders.microBatch(kinesis, LimitsReaders.options(true, extra), cores, expected, count)
      case "fan-out real-time" =>
        LimitsReaders.realTime(kinesis, LimitsReaders.options(true, extra), cores, expected, count)
      case other => throw new IllegalArgumentException(s"no reader '$other'; readers: ${Readers.mkString(", ")}")
    }
    val wallS = (System.nanoTime() - started) / 1e9
    val cpuS = (processCpuNanos() - cpuBefore) / 1e9
    require(count.rows.get() == expected, s"$reader counted ${count.rows.get()} rows of $expected")
    val shardMiB = kinesis.backlogBytes.toDouble / shards / (1 << 20)
    val (calls, throttled, debt) = kinesis.calls
    val fanOut = reader.startsWith("fan-out")
    // The best time the limits allow: polling reads its first page at once, the rest at the rate; fan-out pushes
    // everything at the rate after the push delay.
    val firstPage = math.min(
      if (fanOut) limits.maxEventBytes else limits.maxPageBytes,
      limits.maxPageRecords.toLong * data.length)
    val limitS = (if (fanOut) limits.pushDelayMs / 1000.0 else 0.0) +
      math.max(0.0, kinesis.backlogBytes / shards - firstPage) / limits.readBytesPerSecond
    val kind = s"$reader${if (aggregated) " (KPL)" else ""}"
    f"$shards%6d ${shards.toLong * recordsPerShard}%10d $kind%-20s $wallS%7.1f ${shardMiB / wallS}%8.2f " +
      f"${limitS / wallS}%8.2f ${if (fanOut) kinesis.subscribeCalls else calls}%7d $throttled%7d $debt%6d " +
      f"${cpuS / (count.bytes.get().toDouble / (1L << 30))}%9.2f ${load()}%5s"
  }

  private def processCpuNanos(): Long = ManagementFactory.getOperatingSystemMXBean match {
    case os: com.sun.management.OperatingSystemMXBean => os.getProcessCpuTime
    case _ => throw new IllegalStateException("this JVM does not report its process CPU time")
  }

  /** The machine's 1-minute load average. */
  private def load(): String =
    new String(Files.readAllBytes(Paths.get("/proc/loadavg")), UTF_8).split(' ').head
}
