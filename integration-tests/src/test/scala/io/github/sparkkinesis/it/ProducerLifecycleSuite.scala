package io.github.sparkkinesis.it

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The KPL daemons an executor starts end with it, whether it exits normally or is killed. */
class ProducerLifecycleSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /** A child JVM starts Spark in 10-20 s on two busy cores; writing 1,000 rows takes a few more. */
  private val ChildTimeout = 120.seconds

  /** Pids of the KPL daemons whose parent is `pid`, from /proc (the tests run on Linux). */
  private def daemonsOf(pid: Long): Seq[Long] =
    Option(new File("/proc").listFiles()).toSeq.flatten.filter(_.getName.forall(_.isDigit)).flatMap { proc =>
      try {
        val stat = new String(Files.readAllBytes(new File(proc, "stat").toPath), UTF_8)
        val parent = stat.substring(stat.lastIndexOf(')') + 2).split(' ')(1).toLong
        val command = new String(Files.readAllBytes(new File(proc, "cmdline").toPath), UTF_8)
        if (parent == pid && command.contains("kinesis_producer")) Some(proc.getName.toLong) else None
      } catch { case _: java.io.IOException | _: StringIndexOutOfBoundsException => None } // the process ended
    }

  private def alive(pid: Long): Boolean = new File(s"/proc/$pid").exists()

  /** Starts the writer child, waits until it has written, and returns it with its KPL daemons' pids. */
  private def writtenChild(stream: String, log: File): (Process, Seq[Long]) = {
    val child = ChildJvm.start(SinkWriterDriver, log, stream)
    // Process.pid exists from Java 9; the tests compile for Java 8 (-release 8), so it is called reflectively.
    val pid = classOf[Process].getMethod("pid").invoke(child).asInstanceOf[Long]
    Eventually.await("the child JVM to write its rows", ChildTimeout, ChildJvm.tail(log), every = 200.millis) {
      if (!child.isAlive) Eventually.giveUp(s"the child exited with ${child.exitValue()}; ${ChildJvm.tail(log)}")
      ChildJvm.output(log).contains("SinkWriterDriver: written")
    }
    val daemons = daemonsOf(pid)
    daemons should not be empty
    (child, daemons)
  }

  private def awaitGone(daemons: Seq[Long], after: String): Unit =
    Eventually.await(
      s"the KPL daemons ${daemons.mkString(", ")} to end after $after",
      30.seconds,
      s"still running: ${daemons.filter(alive).mkString(", ")}") {
      !daemons.exists(alive)
    }

  test("an executor that exits normally ends its KPL daemons") {
    val stream = TestStreams.createStream("sink-lifecycle", 1)
    val (child, daemons) = writtenChild(stream, new File(newDir("child"), "normal.log"))
    child.getOutputStream.close() // the child's main returns, and the JVM exits through its shutdown hooks
    child.waitFor(60, TimeUnit.SECONDS) shouldBe true
    child.exitValue() shouldBe 0
    awaitGone(daemons, "a normal exit")
  }

  test("an executor that is killed leaves no KPL daemon behind") {
    val stream = TestStreams.createStream("sink-lifecycle-kill", 1)
    val (child, daemons) = writtenChild(stream, new File(newDir("child"), "killed.log"))
    child.destroyForcibly()
    child.waitFor(30, TimeUnit.SECONDS) shouldBe true
    awaitGone(daemons, "SIGKILL")
  }
}
