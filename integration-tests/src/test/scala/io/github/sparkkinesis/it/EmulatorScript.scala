package io.github.sparkkinesis.it

import java.io.File
import java.net.{InetAddress, ServerSocket}
import java.nio.charset.StandardCharsets
import java.util.concurrent.TimeUnit

import scala.io.Source

/**
 * An emulator run by one of the scripts in `integration-tests/scripts` (`<name>.sh start|stop`): the one an environment
 * variable names when it is set (bin/test starts each once), otherwise one started on first use on free loopback ports
 * (given to the script in `portVariables`, the one of the endpoint first) and stopped when the JVM exits.
 *
 * @param endpointVariable
 *   the environment variable naming a running emulator's endpoint, e.g. MOTO_ENDPOINT
 */
class EmulatorScript(script: String, endpointVariable: String, portVariables: String*) {

  /** Installing from a registry on a cold machine can take a while; starting takes seconds. */
  private val StartTimeoutSeconds = 300L
  private val StopTimeoutSeconds = 30L

  /** The running emulator's endpoint the environment names, if any. */
  protected val runningEndpoint: Option[String] = sys.env.get(endpointVariable).map(_.stripSuffix("/"))

  /** The ports of the emulator this JVM starts, by the script's variable: free loopback ports, chosen once. */
  protected lazy val ownPorts: Map[String, String] =
    portVariables.map(_ -> EmulatorScript.freeLoopbackPort().toString).toMap

  /** The endpoint, such as `http://127.0.0.1:41234`. */
  lazy val endpoint: String = runningEndpoint.getOrElse(own)

  private lazy val own: String = {
    val started = EmulatorScript.run(script, "start", ownPorts, StartTimeoutSeconds)
    // Registered only once the emulator is up, so a failed start does not also report a failed stop.
    Runtime.getRuntime.addShutdownHook(new Thread(
      new Runnable {
        override def run(): Unit = EmulatorScript.run(script, "stop", ownPorts, StopTimeoutSeconds)
      },
      s"$script-stop"))
    started
  }
}

object EmulatorScript {

  private def scriptFile(name: String): File = {
    val root = sys.props.getOrElse(
      "sparkkinesis.projectRoot",
      throw new IllegalStateException(
        "system property sparkkinesis.projectRoot is not set: run the integration tests through sbt " +
          s"(build/sbt integrationTests/test), or set the emulator's endpoint variable to a running $name"))
    val f = new File(root, s"integration-tests/scripts/$name")
    require(f.isFile, s"$f not found; is sparkkinesis.projectRoot ($root) the repository root?")
    f
  }

  /**
   * Runs the script (in `directory`, else this JVM's working directory) and returns the last endpoint it printed on
   * stdout; fails with its whole output otherwise.
   */
  def run(
      script: String,
      command: String,
      env: Map[String, String],
      timeoutSeconds: Long,
      directory: Option[File] = None): String = {
    val out = File.createTempFile(s"$script-$command", ".log")
    out.deleteOnExit()
    val pb = new ProcessBuilder("bash", scriptFile(script).getAbsolutePath, command)
      .redirectErrorStream(true).redirectOutput(out)
    directory.foreach(pb.directory)
    env.foreach { case (k, v) => pb.environment().put(k, v) }
    val process = pb.start()
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly()
      throw new IllegalStateException(s"$script $command did not finish within $timeoutSeconds s:\n${read(out)}")
    }
    val output = read(out)
    if (process.exitValue() != 0) {
      throw new IllegalStateException(s"$script $command failed (exit ${process.exitValue()}):\n$output")
    }
    output.split('\n').map(_.trim).filter(_.startsWith("http://")).lastOption.getOrElse("")
  }

  private def read(f: File): String = {
    val src = Source.fromFile(f, StandardCharsets.UTF_8.name())
    try src.mkString
    finally src.close()
  }

  /** A port nobody listens on right now; the emulator binds it a moment later (a small race we accept). */
  def freeLoopbackPort(): Int = {
    val socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))
    try socket.getLocalPort
    finally socket.close()
  }
}

/** moto's server, for its STS: `MOTO_ENDPOINT` when set, else one started by `moto.sh` (see [[EmulatorScript]]). */
object Moto extends EmulatorScript("moto.sh", "MOTO_ENDPOINT", "MOTO_PORT")

/** DynamoDB Local: `DYNAMODB_LOCAL_ENDPOINT` when set, else one started by `dynamodb-local.sh`. */
object DynamoDbLocal extends EmulatorScript("dynamodb-local.sh", "DYNAMODB_LOCAL_ENDPOINT", "DYNAMODB_LOCAL_PORT") {

  /** The source's options that keep its metadata in a new table of this emulator. */
  def storeOptions(): Seq[(String, String)] = Seq(
    "kinesis.metadataCommitterType" -> "DYNAMODB",
    "kinesis.dynamodb.tableName" -> s"it-metadata-${java.util.UUID.randomUUID().toString.take(8)}",
    "kinesis.dynamodb.endpointUrl" -> endpoint)
}
