package io.github.sparkkinesis.it

import java.io.File
import java.net.{InetAddress, ServerSocket}
import java.nio.charset.StandardCharsets
import java.util.concurrent.TimeUnit

import scala.io.Source

/**
 * The kinesis-mock emulator shared by every suite of the test JVM: `KINESIS_MOCK_ENDPOINT` when set, otherwise one
 * started on first use through `integration-tests/scripts/kinesis-mock.sh` on free loopback ports and stopped when
 * the JVM exits.
 */
object KinesisMock {

  private val runningEndpoint = sys.env.get("KINESIS_MOCK_ENDPOINT").map(_.stripSuffix("/"))

  /** The plain-HTTP endpoint, such as `http://127.0.0.1:41234`. */
  lazy val endpoint: String = runningEndpoint.getOrElse(own.endpoint)

  /**
   * The TLS endpoint, such as `https://127.0.0.1:41235`, for the sink (the KPL speaks HTTPS only; the emulator's
   * certificate is self-signed): with `KINESIS_MOCK_ENDPOINT`, the port `KINESIS_MOCK_TLS_PORT` names.
   */
  lazy val tlsEndpoint: String = {
    val port = runningEndpoint match {
      case None => own.tlsPort
      case Some(running) => sys.env.get("KINESIS_MOCK_TLS_PORT").getOrElse(throw new IllegalStateException(
        s"KINESIS_MOCK_ENDPOINT names a running kinesis-mock ($running) but KINESIS_MOCK_TLS_PORT is not set: set it " +
          "to that emulator's TLS port, which writes through the sink need"))
    }
    s"https://127.0.0.1:$port"
  }

  /** Installing from npm on a cold machine can take a while; starting takes about a second. */
  private val StartTimeoutSeconds = 180L
  private val StopTimeoutSeconds = 30L

  private final case class Own(endpoint: String, tlsPort: String)

  private lazy val own: Own = {
    val tlsPort = freeLoopbackPort().toString
    val env = Map(
      "KINESIS_MOCK_PORT" -> freeLoopbackPort().toString,
      "KINESIS_MOCK_TLS_PORT" -> tlsPort)
    val started = runScript("start", env, StartTimeoutSeconds)
    // Registered only once the emulator is up, so a failed start does not also report a failed stop.
    Runtime.getRuntime.addShutdownHook(new Thread(new Runnable {
      override def run(): Unit = runScript("stop", env, StopTimeoutSeconds)
    }, "kinesis-mock-stop"))
    Own(started, tlsPort)
  }

  private def script: File = {
    val root = sys.props.getOrElse("sparkkinesis.projectRoot", throw new IllegalStateException(
      "system property sparkkinesis.projectRoot is not set: run the integration tests through sbt " +
        "(build/sbt integrationTests/test), or set KINESIS_MOCK_ENDPOINT to a running kinesis-mock"))
    val f = new File(root, "integration-tests/scripts/kinesis-mock.sh")
    require(f.isFile, s"$f not found; is sparkkinesis.projectRoot ($root) the repository root?")
    f
  }

  /** Runs the script and returns the last line it printed on stdout; fails with its whole output otherwise. */
  private def runScript(command: String, env: Map[String, String], timeoutSeconds: Long): String = {
    val out = File.createTempFile("kinesis-mock-" + command, ".log")
    out.deleteOnExit()
    val pb = new ProcessBuilder("bash", script.getAbsolutePath, command).redirectErrorStream(true).redirectOutput(out)
    env.foreach { case (k, v) => pb.environment().put(k, v) }
    val process = pb.start()
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly()
      throw new IllegalStateException(s"kinesis-mock.sh $command did not finish within $timeoutSeconds s:\n${read(out)}")
    }
    val output = read(out)
    if (process.exitValue() != 0) {
      throw new IllegalStateException(s"kinesis-mock.sh $command failed (exit ${process.exitValue()}):\n$output")
    }
    output.split('\n').map(_.trim).filter(_.startsWith("http://")).lastOption.getOrElse("")
  }

  private def read(f: File): String = {
    val src = Source.fromFile(f, StandardCharsets.UTF_8.name())
    try src.mkString finally src.close()
  }

  /** A port nobody listens on right now; the emulator binds it a moment later (a small race we accept). */
  private def freeLoopbackPort(): Int = {
    val socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))
    try socket.getLocalPort finally socket.close()
  }
}
