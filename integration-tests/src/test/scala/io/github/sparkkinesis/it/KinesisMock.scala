package io.github.sparkkinesis.it

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
    val tlsPort = EmulatorScript.freeLoopbackPort().toString
    val env = Map(
      "KINESIS_MOCK_PORT" -> EmulatorScript.freeLoopbackPort().toString,
      "KINESIS_MOCK_TLS_PORT" -> tlsPort)
    val started = EmulatorScript.run("kinesis-mock.sh", "start", env, StartTimeoutSeconds)
    // Registered only once the emulator is up, so a failed start does not also report a failed stop.
    Runtime.getRuntime.addShutdownHook(new Thread(new Runnable {
      override def run(): Unit = EmulatorScript.run("kinesis-mock.sh", "stop", env, StopTimeoutSeconds)
    }, "kinesis-mock-stop"))
    Own(started, tlsPort)
  }
}
