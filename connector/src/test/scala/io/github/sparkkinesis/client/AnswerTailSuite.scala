package io.github.sparkkinesis.client

import java.time.Duration

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import software.amazon.awssdk.core.metrics.CoreMetric
import software.amazon.awssdk.metrics.MetricCollector

/** How long a GetRecords call went on after Kinesis answered, from the metrics the SDK publishes for the call. */
class AnswerTailSuite extends AnyFunSuite with Matchers {

  /** The metrics of a call whose attempts took `tailsMs` each from the answer to the parsed response. */
  private def call(tailsMs: Long*) = {
    val collector = MetricCollector.create("ApiCall")
    tailsMs.foreach { ms =>
      collector.createChild("ApiCallAttempt").reportMetric(CoreMetric.UNMARSHALLING_DURATION, Duration.ofMillis(ms))
    }
    collector.collect()
  }

  test("Given a call's published metrics, then the tail is its last attempt's time from the answer to the response") {
    val tail = new AnswerTail
    tail.ms shouldBe 0L // nothing published yet: the page paces from the call's end, as before
    tail.publish(call(40L, 1200L)) // a throttled attempt, then the one that brought the page
    tail.ms shouldBe 1200L
  }

  test("Given a call whose metrics hold no attempt's unmarshalling, then the tail stays 0") {
    val tail = new AnswerTail
    tail.publish(MetricCollector.create("ApiCall").collect())
    tail.ms shouldBe 0L
  }
}
