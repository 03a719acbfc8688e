package io.github.sparkkinesis

import java.net.URLClassLoader

import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.source.GetRecordsCallsMetric

class SparkThreadsClassLoadingSuite extends AnyFunSuite with Matchers {

  test("Given Spark's loader without the connector (artifacts in a session's own loader), then it does not load it") {
    // Given a loader that sees only the JDK, as Spark's start-up loader sees none of a session's artifacts
    val withoutConnector = new URLClassLoader(Array.empty, null)
    // When asked whether it loads the connector's metric class by name, as Spark's SQL tab does
    // Then it does not; the loader the connector came from does, and with no session there is nothing to leave out
    SparkThreadsClassLoading.loads(Some(withoutConnector), classOf[GetRecordsCallsMetric]) shouldBe false
    SparkThreadsClassLoading.loads(Some(getClass.getClassLoader), classOf[GetRecordsCallsMetric]) shouldBe true
    SparkThreadsClassLoading.loads(None, classOf[GetRecordsCallsMetric]) shouldBe true
  }

  test("Given no active session (unit tests, tools), then the connector counts as loadable") {
    SparkThreadsClassLoading.connectorLoads() shouldBe true
  }

  test("Given an active session whose SparkContext has stopped (another suite's, a query's session after stop), " +
    "then the connector counts as loadable rather than failing to build the session's shared state") {
    val session = SparkSession.builder().master("local[1]").appName("stopped").getOrCreate()
    try {
      SparkSession.setActiveSession(session)
      session.sparkContext.stop()
      SparkThreadsClassLoading.connectorLoads() shouldBe true
    } finally {
      session.stop()
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    }
  }
}
