package io.github.sparkkinesis.it

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import scala.collection.JavaConverters._

/** Starts a `main` of the test classpath in a child JVM with this JVM's flags (Spark's --add-opens and friends). */
object ChildJvm {

  def start(mainObject: AnyRef, log: File, args: String*): Process = startWith(mainObject, log, Map.empty, args: _*)

  /** [[start]] with `env` changed: a value of None removes the variable. */
  def startWith(mainObject: AnyRef, log: File, env: Map[String, Option[String]], args: String*): Process = {
    val inherited = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala.filterNot { a =>
      a.startsWith("-Xmx") || a.startsWith("-Xms") || a.startsWith("-agentlib:") || a.startsWith("-javaagent:")
    }
    val command = Seq(Paths.get(System.getProperty("java.home"), "bin", "java").toString, "-Xmx1g") ++ inherited ++
      Seq("-cp", System.getProperty("java.class.path"), mainObject.getClass.getName.stripSuffix("$")) ++ args
    val pb = new ProcessBuilder(command.asJava).redirectErrorStream(true).redirectOutput(log)
    pb.environment().put("KINESIS_MOCK_ENDPOINT", KinesisMock.endpoint)
    pb.environment().put("KINESIS_MOCK_TLS_PORT", java.net.URI.create(KinesisMock.tlsEndpoint).getPort.toString)
    env.foreach {
      case (k, Some(v)) => pb.environment().put(k, v)
      case (k, None) => pb.environment().remove(k)
    }
    pb.start()
  }

  /** The last lines a child wrote, for failure messages. */
  def tail(log: File): String =
    if (!log.exists()) "(no output)"
    else Files.readAllLines(log.toPath, UTF_8).asScala.takeRight(30).mkString(s"last lines of $log:\n", "\n", "")

  def output(log: File): String = if (log.exists()) new String(Files.readAllBytes(log.toPath), UTF_8) else ""
}
