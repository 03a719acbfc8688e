package io.github.sparkkinesis.it

import java.util.UUID
import java.util.concurrent.{ConcurrentHashMap, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.sql.expressions.UserDefinedFunction
import org.apache.spark.sql.functions

/**
 * Pauses a write at chosen rows, so a test can act exactly then (take the endpoint down, run another job), and counts
 * the rows that went through. Used from a UDF, which runs in this JVM in local mode. Each chosen row pauses on its
 * first pass only: a retried task runs straight through.
 */
final class RowGate private (name: String, pauseAt: Set[Long]) {

  /** Counted down once per chosen row that reached the gate. */
  val reached = new CountDownLatch(pauseAt.size)

  /** Lets the paused rows go on. */
  val release = new CountDownLatch(1)
  private val paused = ConcurrentHashMap.newKeySet[Long]()
  private val passedRows = new AtomicLong()

  /** Rows that reached the gate so far. */
  def passed: Long = passedRows.get()

  /** A UDF that passes each row's id through this gate and returns it. */
  def udf: UserDefinedFunction = {
    val key = name
    functions.udf((id: Long) => RowGate(key).pass(id))
  }

  private def pass(id: Long): Long = {
    passedRows.incrementAndGet()
    if (pauseAt(id) && paused.add(id)) {
      reached.countDown()
      release.await(60, TimeUnit.SECONDS)
    }
    id
  }
}

object RowGate {
  private val gates = new ConcurrentHashMap[String, RowGate]()

  /** A new gate that pauses the rows with these ids. */
  def pausingAt(ids: Long*): RowGate = {
    val name = UUID.randomUUID().toString
    val gate = new RowGate(name, ids.toSet)
    gates.put(name, gate)
    gate
  }

  private def apply(name: String): RowGate = gates.get(name)
}
