package io.github.sparkkinesis.tools

import java.io.PrintStream
import java.time.Instant

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration

import io.github.sparkkinesis.client.{FanOutClient, SdkKinesisClient}
import io.github.sparkkinesis.offsets.Json
import io.github.sparkkinesis.options.ToolOptions

/**
 * `consumers list|prune`: a stream's enhanced fan-out consumers, which of them the connector registered and which
 * query's checkpoint holds each, and (prune) deregistering the connector's consumers no checkpoint holds. Prune is a
 * dry run unless `--yes` is given. Run by `python -m pyspark_kinesis consumers`, on Spark's JARs and the connector's,
 * so it reaches Kinesis with the connector's client and options and checkpoints with Hadoop's file systems.
 */
object ConsumersCli {

  val Usage: String =
    """usage: consumers {list,prune} --stream NAME|ARN [--older-than DURATION] [--yes] [--json] [--option KEY=VALUE]...
      |
      |  list                 the stream's consumers: name, status, creation time, ARN, and for those spark-kinesis
      |                       registered, the checkpoint that registered it and whether it still holds it
      |  prune                deregister the consumers spark-kinesis registered that no checkpoint holds (the
      |                       checkpoint was deleted, or its query reads through another consumer now); a dry run
      |                       that only prints what it would do, unless --yes
      |  --stream             the stream, by name or ARN
      |  --older-than         prune only consumers registered at least this long ago (default 1h), e.g. 7d, 12h, 0s
      |  --yes, --apply       deregister (prune); without it nothing changes
      |  --json               print one JSON document instead of text
      |  --option KEY=VALUE   a connector option reaching Kinesis, as a query gives it: kinesis.region,
      |                       kinesis.endpointUrl, kinesis.awsAccessKeyId, kinesis.stsRoleArn, ...; spark.hadoop.KEY
      |                       sets the Hadoop setting KEY for reading checkpoints, as Spark does
      |""".stripMargin

  private val DefaultOlderThan = "1h"

  /** What the command line asks for. */
  final case class Command(
      prune: Boolean,
      stream: String,
      olderThanMs: Long,
      apply: Boolean,
      json: Boolean,
      options: Map[String, String],
      hadoop: Map[String, String])

  def main(args: Array[String]): Unit = sys.exit(run(args.toSeq, System.out, System.err))

  /** Runs the command; returns the exit code: 0 done, 1 a failure (Kinesis, a deregistration), 2 a usage error. */
  def run(args: Seq[String], out: PrintStream, err: PrintStream): Int = {
    if (args.exists(a => a == "-h" || a == "--help")) {
      out.print(Usage)
      return 0
    }
    val command =
      try parse(args)
      catch {
        case e: IllegalArgumentException =>
          err.println(s"consumers: ${e.getMessage}\n\n$Usage")
          return 2
      }
    val settings =
      try ToolOptions.clientSettings(command.options)
      catch {
        case e: IllegalArgumentException =>
          err.println(s"consumers: ${e.getMessage}")
          return 2
      }
    // Consumer calls go through the connector's fan-out client: HTTP/2, negotiated over TLS.
    settings.endpointUrl.filter(_.getScheme.equalsIgnoreCase("http")).foreach { url =>
      err.println(s"consumers: option kinesis.endpointUrl is '$url', plain HTTP: the consumer calls go through the " +
        "connector's enhanced fan-out client, which speaks HTTP/2 over TLS, as a fan-out query does. Give the " +
        "endpoint's https:// URL (an emulator's TLS port, with kinesis.verifyCertificate=false).")
      return 2
    }
    val client = new SdkKinesisClient(settings)
    val hadoopConf = new Configuration()
    command.hadoop.foreach { case (k, v) => hadoopConf.set(k, v) }
    try execute(command, client, hadoopConf, () => System.currentTimeMillis(), out)
    catch {
      case NonFatal(e) =>
        err.println(s"consumers: ${e.getMessage}")
        1
    } finally client.close()
  }

  /** Lists, and for prune deregisters (with `apply`) or names, the consumers to prune; returns the exit code. */
  def execute(
      command: Command,
      client: FanOutClient,
      hadoopConf: Configuration,
      clock: () => Long,
      out: PrintStream): Int = {
    val inventory = new ConsumerInventory(client, hadoopConf, clock)
    val entries = inventory.entries(command.stream)
    val candidates = if (command.prune) inventory.prunable(entries, command.olderThanMs) else Nil
    val failures = candidates.map(e => e -> (if (command.apply) inventory.deregister(e) else None))
    val report = new ConsumersReport(command, entries, failures)
    out.println(if (command.json) Json.write(report.json) else report.text)
    if (failures.exists(_._2.isDefined)) 1 else 0
  }

  def parse(args: Seq[String]): Command = {
    val prune = args.headOption match {
      case Some("list") => false
      case Some("prune") => true
      case other => throw new IllegalArgumentException(s"the first argument must be list or prune, not ${other
            .fold("nothing")(a => s"'$a'")}")
    }
    var (stream, olderThan, apply, json) = (Option.empty[String], DefaultOlderThan, false, false)
    val options = Map.newBuilder[String, String]
    val rest = args.tail.iterator
    def value(flag: String): String =
      if (rest.hasNext) rest.next() else throw new IllegalArgumentException(s"$flag needs a value")
    while (rest.hasNext) rest.next() match {
      case "--stream" => stream = Some(value("--stream"))
      case "--older-than" => olderThan = value("--older-than")
      case "--yes" | "--apply" => apply = true
      case "--json" => json = true
      case "--option" =>
        val pair = value("--option")
        val at = pair.indexOf('=')
        if (at <= 0) throw new IllegalArgumentException(s"--option takes KEY=VALUE, not '$pair'")
        options += pair.take(at).trim -> pair.drop(at + 1)
      case other => throw new IllegalArgumentException(s"unknown argument '$other'")
    }
    if (apply && !prune) throw new IllegalArgumentException("--yes goes with prune; list changes nothing")
    val given = options.result()
    val (hadoop, kinesis) = given.partition(_._1.startsWith(SparkHadoopPrefix))
    kinesis.keys.find(!_.toLowerCase(java.util.Locale.ROOT).startsWith("kinesis.")).foreach { key =>
      throw new IllegalArgumentException(s"--option $key: only kinesis.* options and $SparkHadoopPrefix* settings " +
        "are read here")
    }
    Command(
      prune,
      stream.getOrElse(throw new IllegalArgumentException("--stream is required: the stream's name or ARN")),
      ToolOptions.duration(olderThan, "--older-than"),
      apply,
      json,
      kinesis,
      hadoop.map { case (k, v) => k.stripPrefix(SparkHadoopPrefix) -> v })
  }

  private val SparkHadoopPrefix = "spark.hadoop."

  /** A creation time as people read it. */
  private[tools] def instant(ms: Long): String = Instant.ofEpochMilli(ms).toString
}
