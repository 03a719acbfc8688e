// A user's sbt project that depends on the connector by its Maven coordinates, as published by the main build
// (python/tests/test_maven_coordinates.py runs it): its version and Spark's come from system properties.
val connectorVersion = sys.props("sparkkinesis.version")
val sparkVersion = sys.props("sparkkinesis.sparkVersion")

scalaVersion := sys.props("sparkkinesis.scalaVersion")
libraryDependencies ++= Seq(
  "io.github.spark-kinesis" %% "spark-kinesis" % connectorVersion,
  "org.apache.spark" %% "spark-sql" % sparkVersion)
// Spark 4.2 brings a newer scala-library than the 2.13 compiler the connector is built with; it runs on that library,
// as spark-submit would run it.
allowUnsafeScalaLibUpgrade := true
run / fork := true
// What spark-submit adds on Java 17, from the main build's list.
run / javaOptions ++= IO.readLines(file(sys.props("sparkkinesis.jvmOptions"))).map(_.trim).filter(_.nonEmpty)
run / envVars += "SPARK_LOCAL_IP" -> "127.0.0.1"
