package io.github.sparkkinesis

import java.util.Properties

/** The connector's version, as the build wrote it from the repository's VERSION file. */
object ConnectorVersion {
  lazy val value: String = {
    val in = getClass.getResourceAsStream("/io/github/sparkkinesis/version.properties")
    require(in != null, "version.properties is missing from the connector JAR; rebuild it with build/sbt")
    try {
      val props = new Properties()
      props.load(in)
      props.getProperty("version")
    } finally in.close()
  }
}
