package io.github.sparkkinesis.it

import java.io.File
import java.nio.file.{Files, Path}
import java.util.Comparator

import scala.concurrent.duration._

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.streaming.StreamingQuery
import org.scalatest.{BeforeAndAfterAll, BeforeAndAfterEach, Suite}

/**
 * The SparkSession every suite of the test JVM shares: two cores, no UI, two shuffle partitions, UTC, a temporary
 * warehouse. A failed task is tried up to 4 times, as on a cluster (plain local mode never retries), so retries are
 * exercised too.
 */
object SparkHarness {

  lazy val session: SparkSession = SparkSession.builder()
    .master("local[2,4]")
    .appName("spark-kinesis-integration-tests")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.session.timeZone", "UTC")
    // Loopback only, like the emulator; avoids depending on how the machine's hostname resolves.
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    // Catalog tables (SqlTablesSuite) get their folders here, not in the working directory.
    .config("spark.sql.warehouse.dir", newTempDir("it-warehouse-").getAbsolutePath)
    .getOrCreate()

  /** The options every query against the emulator sets, so tests only state what they are about. */
  def kinesisOptions(stream: String, startingPosition: String): Map[String, String] = Map(
    "kinesis.streamName" -> stream,
    "kinesis.endpointUrl" -> KinesisMock.endpoint,
    "kinesis.region" -> TestStreams.Region,
    "kinesis.awsAccessKeyId" -> TestStreams.AccessKeyId,
    "kinesis.awsSecretKey" -> TestStreams.SecretKey,
    "kinesis.startingPosition" -> startingPosition,
    // Shard discovery every 100 ms instead of the production default, so resharding shows up quickly.
    "kinesis.describeShardInterval" -> "100ms")

  /** `aws-kinesis` on `stream` with [[kinesisOptions]], `extra` options added or overriding them. */
  def readKinesis(stream: String, startingPosition: String, extra: (String, String)*): DataFrame =
    session.readStream.format("aws-kinesis").options(kinesisOptions(stream, startingPosition) ++ extra).load()

  /** A new empty directory under java.io.tmpdir; [[deleteRecursively]] removes it. */
  def newTempDir(prefix: String): File = Files.createTempDirectory(prefix).toFile

  def deleteRecursively(dir: File): Unit = if (dir.exists()) {
    val paths = Files.walk(dir.toPath)
    try paths.sorted(Comparator.reverseOrder[Path]()).forEach(p => Files.deleteIfExists(p))
    finally paths.close()
  }
}

/**
 * What a suite that runs streaming queries against the emulator needs: the shared session, a fresh checkpoint directory
 * per test, a reader for the `aws-kinesis` format with the emulator's settings, and no query or producer left running
 * after a test.
 */
trait SparkIntegrationSuite extends BeforeAndAfterEach with BeforeAndAfterAll { self: Suite =>

  protected def spark: SparkSession = SparkHarness.session

  private var suiteDir: File = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    suiteDir = SparkHarness.newTempDir(s"it-${getClass.getSimpleName}-")
  }

  override protected def afterAll(): Unit = {
    try SparkHarness.deleteRecursively(suiteDir)
    finally super.afterAll()
  }

  override protected def afterEach(): Unit = {
    try {
      BackgroundProducer.closeAll()
      spark.streams.active.foreach(_.stop())
    } finally super.afterEach()
  }

  /** A new, empty directory for one test's checkpoint or output, removed after the suite. */
  protected def newDir(name: String): File = Files.createTempDirectory(suiteDir.toPath, name + "-").toFile

  protected def newCheckpointDir(): String = newDir("checkpoint").getAbsolutePath

  /** `aws-kinesis` on `stream` with the emulator's settings, `extra` options added or overriding them. */
  protected def readKinesis(stream: String, startingPosition: String, extra: (String, String)*): DataFrame =
    SparkHarness.readKinesis(stream, startingPosition, extra: _*)

  /** Starts `df` into a new [[BatchCollector]] with a new checkpoint. */
  protected def startCollecting(df: DataFrame): (StreamingQuery, BatchCollector) = {
    val sink = new BatchCollector
    (sink.start(df, newCheckpointDir()), sink)
  }

  /**
   * Waits until the sink holds as many records as `expected`, lets the query process whatever else is available (so
   * late duplicates would show), then checks that the sink holds each expected record exactly once.
   */
  protected def assertReadsExactly(
      query: StreamingQuery,
      sink: BatchCollector,
      expected: Seq[Put],
      timeout: FiniteDuration = 60.seconds): Unit = {
    sink.awaitRecords(query, expected.size, timeout)
    query.processAllAvailable()
    assert(sink.errors.isEmpty, sink.errors.mkString("; "))
    RecordChecks.assertDeliveredExactlyOnce(expected, sink.records)
  }
}
