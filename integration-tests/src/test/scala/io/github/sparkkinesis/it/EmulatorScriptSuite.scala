package io.github.sparkkinesis.it

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}

import scala.collection.JavaConverters._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The emulator scripts themselves: what they leave behind where they are started. */
class EmulatorScriptSuite extends AnyFunSuite with Matchers {

  private val MetadataFile = "dynamodb-local-metadata.json"

  test("dynamodb-local.sh runs DynamoDB Local with telemetry off and writes nothing where it was called from") {
    // Given an empty directory to call the script from, and a port of this test's own
    val caller = Files.createTempDirectory("dynamodb-local-caller")
    val env = Map("DYNAMODB_LOCAL_PORT" -> EmulatorScript.freeLoopbackPort().toString)
    // When DynamoDB Local is started from there and answers
    val endpoint = EmulatorScript.run("dynamodb-local.sh", "start", env, 300L, Some(caller.toFile))
    try {
      endpoint should startWith("http://127.0.0.1:")
      // Then the caller's directory stays empty, and no metadata file anywhere under .emulators records telemetry on
      // (DynamoDB Local writes that file into its working directory when it starts)
      Files.list(caller).iterator().asScala.toList shouldBe empty
      val root = new File(sys.props("sparkkinesis.projectRoot"), ".emulators/dynamodb-local").toPath
      val withTelemetry = Files.walk(root).iterator().asScala.filter(_.getFileName.toString == MetadataFile)
        .filter(p => new String(Files.readAllBytes(p), UTF_8).contains("\"telemetryEnabled\":\"true\"")).toList
      withTelemetry shouldBe empty
    } finally {
      EmulatorScript.run("dynamodb-local.sh", "stop", env, 60L, Some(caller.toFile))
      deleteTree(caller)
    }
  }

  private def deleteTree(dir: Path): Unit =
    Files.walk(dir).iterator().asScala.toList.reverse.foreach(p => Files.deleteIfExists(p))
}
