package io.github.sparkkinesis.it

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.zip.ZipFile

import scala.collection.JavaConverters._
import scala.io.Source

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The shaded JAR redistributes third-party code: it carries the project's LICENSE and a NOTICE naming each part. */
class LicenceFilesSuite extends AnyFunSuite with Matchers {

  private val jarPath = sys.props.getOrElse(
    "sparkkinesis.assemblyJar",
    fail("system property sparkkinesis.assemblyJar is not set; run the tests through build/sbt"))
  private val root = new File(sys.props.getOrElse("sparkkinesis.projectRoot", fail("sparkkinesis.projectRoot unset")))

  private def rootFile(name: String) =
    new String(Files.readAllBytes(new File(root, name).toPath), StandardCharsets.UTF_8)

  private def withJar[T](f: ZipFile => T): T = {
    val zip = new ZipFile(jarPath)
    try f(zip)
    finally zip.close()
  }

  private def text(zip: ZipFile, entry: String): String = {
    val found = Option(zip.getEntry(entry)).getOrElse(fail(s"$entry is not in $jarPath"))
    val source = Source.fromInputStream(zip.getInputStream(found), "UTF-8")
    try source.mkString
    finally source.close()
  }

  /** Each relocated package, and the words NOTICE uses for the component it comes from. */
  private val Components = Map(
    "awssdk" -> "AWS SDK for Java",
    "eventstream" -> "software.amazon.eventstream",
    "netty" -> "Netty",
    "jackson" -> "Jackson",
    "reactivestreams" -> "Reactive Streams",
    "protobuf" -> "Protocol Buffers",
    "apache/http" -> "Apache HttpComponents HttpClient",
    "apache/commons/codec" -> "Commons Codec",
    "apache/commons/io" -> "Commons IO",
    "apache/commons/lang3" -> "Commons Lang",
    "kpl" -> "Amazon Kinesis Producer Library",
    "schemaregistry" -> "AWS Glue Schema Registry serde",
    "avro" -> "Apache Avro",
    "guava" -> "Guava",
    "errorprone" -> "Error Prone",
    "j2objc" -> "J2ObjC",
    "checkerframework" -> "Checker Framework",
    "javax/annotation" -> "JSR 305")

  test("Given the shaded JAR, then META-INF holds the project's LICENSE and NOTICE as the repository has them") {
    withJar { zip =>
      text(zip, "META-INF/LICENSE") shouldBe rootFile("LICENSE")
      text(zip, "META-INF/NOTICE") shouldBe rootFile("NOTICE")
      rootFile("LICENSE") should include("Apache License\n                           Version 2.0, January 2004")
    }
  }

  test("Given every relocated package in the JAR, then NOTICE names the component it comes from") {
    val prefix = "io/github/sparkkinesis/shaded/"
    val packages = withJar(_.entries().asScala.map(_.getName).toVector)
      .filter(n => n.startsWith(prefix) && !n.endsWith("/"))
      .map(_.stripPrefix(prefix))
    val unnamed = packages.filterNot(p => Components.keys.exists(k => p.startsWith(k + "/"))).map(_.split('/').head)
    withClue("relocated packages with no NOTICE line (add the component to NOTICE and to this map): ") {
      unnamed.distinct shouldBe empty
    }
    val notice = rootFile("NOTICE")
    val used = Components.filter { case (pkg, _) => packages.exists(_.startsWith(pkg + "/")) }
    used.values.filterNot(notice.contains) shouldBe empty
    notice should include("MPL-2.0") // the KPL's CA certificates and the public suffix list
  }

  test("Given the KPL's third-party notices and each dependency's own licence files, then the JAR keeps them") {
    withJar { zip =>
      val meta = zip.entries().asScala.map(_.getName).filter(_.startsWith("META-INF/")).toVector
      // Renamed after the JAR they came from, so none overwrites another or the project's own.
      meta.filter(_.startsWith("META-INF/THIRD_PARTY_NOTICES_amazon-kinesis-producer-")) should have size 1
      meta.filter(_.matches("META-INF/NOTICE_kinesis-2[.0-9]+\\.txt")) should have size 1
      meta.filter(_.matches("META-INF/LICENSE_netty-nio-client-2[.0-9]+\\.txt")) should have size 1
    }
  }

  test("Given the KPL's native folder, then only the daemons it runs are bundled, not the unused macOS zip") {
    withJar { zip =>
      val natives =
        zip.entries().asScala.map(_.getName).filter(_.startsWith("amazon-kinesis-producer-native-binaries/"))
      natives.filterNot(_.endsWith("/")).toSet shouldBe
        Set("linux-x86_64", "linux-aarch64", "osx").map(p =>
          s"amazon-kinesis-producer-native-binaries/$p/kinesis_producer")
    }
  }
}
