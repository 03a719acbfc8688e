package io.github.sparkkinesis.it

import java.util.zip.ZipFile

import scala.collection.JavaConverters._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The assembly JAR bundles nothing that could clash with a cluster's own JARs. */
class ShadedJarSuite extends AnyFunSuite with Matchers {

  private val jarPath = sys.props.getOrElse(
    "sparkkinesis.assemblyJar",
    fail("system property sparkkinesis.assemblyJar is not set; run the tests through build/sbt"))

  /**
   * The connector's one package inside Spark's: it reads the executors off the block manager, which Spark keeps private
   * to its own packages (its Kafka source does the same from inside them). Named after the connector, it clashes with
   * no class of Spark's.
   */
  private val InSparksPackage = "org/apache/spark/sparkkinesis/"
  private def connectorsOwn(entry: String) =
    entry.startsWith("io/github/sparkkinesis/") || entry.startsWith(InSparksPackage)

  private val entries: Seq[String] = {
    val zip = new ZipFile(jarPath)
    try zip.entries().asScala.map(_.getName).filterNot(_.endsWith("/")).toVector
    finally zip.close()
  }

  test("the tests run on the JVM asked for (bin/test runs this suite and fan-out's on Java 21 too), Java 17 or later") {
    val running = new java.io.File(sys.props("java.home")).getCanonicalPath
    sys.props.get("sparkkinesis.javaHome").foreach(asked => running shouldBe new java.io.File(asked).getCanonicalPath)
    sys.props("java.specification.version").toInt should be >= 17
    info(s"Java ${sys.props("java.version")} (${sys.props("java.vendor")}) at $running")
  }

  test("every class in the assembly JAR is the connector's own or relocated under its shaded package") {
    val classes = entries.filter(_.endsWith(".class"))
    classes.size should be > 1000
    val unrelocated = classes.filterNot(connectorsOwn)
    withClue(s"unrelocated classes (first 20 of ${unrelocated.size}): ${unrelocated.take(20).mkString(", ")}") {
      unrelocated shouldBe empty
    }
  }

  test("the AWS SDK, Netty, Jackson, protobuf, the KPL and Guava are inside, relocated") {
    Seq(
      "awssdk/services/kinesis/KinesisClient.class",
      "netty/buffer/ByteBuf.class",
      "jackson/databind/ObjectMapper.class",
      "protobuf/CodedInputStream.class",
      "kpl/KinesisProducer.class",
      "guava/util/concurrent/ListenableFuture.class").foreach { path =>
      entries should contain(s"io/github/sparkkinesis/shaded/$path")
    }
  }

  test("the CloudWatch client (the KPL's constructor always builds one; the lag publisher calls it) and the CBOR " +
    "protocol it speaks are inside, relocated") {
    entries should contain("io/github/sparkkinesis/shaded/awssdk/services/cloudwatch/CloudWatchClient.class")
    entries should contain("io/github/sparkkinesis/shaded/awssdk/protocols/rpcv2/SmithyRpcV2CborProtocolFactory.class")
  }

  test("Scala, Spark, Hadoop and SLF4J are not bundled; the connector's classes in Spark's package are only its own") {
    entries.filter(e => Seq("scala/", "org/apache/spark/", "org/apache/hadoop/", "org/slf4j/").exists(e.startsWith))
      .filterNot(_.startsWith(InSparksPackage)) shouldBe empty
    // by top-level name (a Scala object's classes share it): the Scala 2.13 JAR also counts a real-time batch's slots
    val own = entries.filter(_.startsWith(InSparksPackage))
      .map(_.stripPrefix(InSparksPackage).takeWhile(c => c != '$' && c != '.')).toSet
    // ExpressionColumns: the payload functions' Column of a Catalyst expression, which Spark 4 keeps to its packages.
    val both = Set("ExecutorLocations", "ExpressionColumns", "SparkMetricsSources")
    own shouldBe (if (scala.util.Properties.versionNumberString.startsWith("2.12")) both
                  else both + "RealTimeBatchSlots")
  }

  test("service registrations name only relocated interfaces, and the data source is registered") {
    val services = entries.filter(_.startsWith("META-INF/services/")).map(_.stripPrefix("META-INF/services/"))
    services should contain("org.apache.spark.sql.sources.DataSourceRegister")
    services.filterNot(s =>
      s.startsWith("io.github.sparkkinesis.") ||
        s == "org.apache.spark.sql.sources.DataSourceRegister") shouldBe empty
  }

  test("resources outside the connector's package are only metadata and data files loaded by name") {
    // The relocated SDK and HTTP client still load these two by their original names; both are plain data. The
    // KPL extracts its native daemon and its CA certificates from these folders, also by name.
    val loadedByName = Set("mozilla/public-suffix-list.txt", "mime.types")
    val kplFolders = Seq("amazon-kinesis-producer-native-binaries/", "cacerts/")
    entries.filterNot(e =>
      connectorsOwn(e) || e.startsWith("META-INF/") ||
        loadedByName(e) || kplFolders.exists(e.startsWith)) shouldBe empty
  }

  test("the KPL's native daemon is inside for Linux (x86_64, aarch64) and macOS, the Linux ones stripped") {
    Seq("linux-x86_64/kinesis_producer", "linux-aarch64/kinesis_producer", "osx/kinesis_producer").foreach { binary =>
      entries should contain(s"amazon-kinesis-producer-native-binaries/$binary")
    }
    val zip = new ZipFile(jarPath)
    try {
      Seq("linux-x86_64", "linux-aarch64").foreach { platform =>
        // The KPL JAR's copies, with debug information, are about 90 MB each; stripped, under 20 MB.
        zip.getEntry(s"amazon-kinesis-producer-native-binaries/$platform/kinesis_producer").getSize should be <
          40L * 1000 * 1000
      }
    } finally zip.close()
  }
}
