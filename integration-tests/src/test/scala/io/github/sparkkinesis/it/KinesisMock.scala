package io.github.sparkkinesis.it

/**
 * The kinesis-mock emulator shared by every suite of the test JVM: `KINESIS_MOCK_ENDPOINT` when set, otherwise one
 * started on first use through `integration-tests/scripts/kinesis-mock.sh` on free loopback ports and stopped when the
 * JVM exits (see [[EmulatorScript]]).
 */
object KinesisMock
    extends EmulatorScript("kinesis-mock.sh", "KINESIS_MOCK_ENDPOINT", "KINESIS_MOCK_PORT", "KINESIS_MOCK_TLS_PORT") {

  /**
   * The TLS endpoint, such as `https://127.0.0.1:41235`, for the sink (the KPL speaks HTTPS only; the emulator's
   * certificate is self-signed): with `KINESIS_MOCK_ENDPOINT`, the port `KINESIS_MOCK_TLS_PORT` names.
   */
  lazy val tlsEndpoint: String = {
    val port = runningEndpoint match {
      case None =>
        endpoint // started with the TLS port
        ownPorts("KINESIS_MOCK_TLS_PORT")
      case Some(running) => sys.env.get("KINESIS_MOCK_TLS_PORT").getOrElse(throw new IllegalStateException(
          s"KINESIS_MOCK_ENDPOINT names a running kinesis-mock ($running) but KINESIS_MOCK_TLS_PORT is not set: set " +
            s"it " +
            "to that emulator's TLS port, which writes through the sink need"))
    }
    s"https://127.0.0.1:$port"
  }
}
