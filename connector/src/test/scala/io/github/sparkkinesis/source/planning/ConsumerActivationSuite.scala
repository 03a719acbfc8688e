package io.github.sparkkinesis.source.planning

import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.options.FanOutOptions

/** How [[FanOutConsumer]] waits for the consumer it registers to become ACTIVE: when it looks, and how often. */
class ConsumerActivationSuite extends AnyFunSuite with Matchers {

  /**
   * The fake's fan-out side, each call taking `callMs` of the manual clock (a round trip), the time each call began
   * recorded by operation; a consumer is ACTIVE `activationMillis` after its registration began.
   */
  private final class TimedFanOut(activationMillis: Long, callMs: Long) extends FanOutClient {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    fake.createStream("s", 1)
    fake.fanOut.activationMillis = activationMillis
    val began = ArrayBuffer.empty[(String, Long)]
    @volatile var beforeTagging: () => Unit = () => ()

    private def timed[T](operation: String)(call: => T): T = {
      began += operation -> clock()
      try call
      finally clock.advance(callMs)
    }

    def startsOf(operation: String): Seq[Long] = began.collect { case (`operation`, at) => at }.toVector

    /** When DescribeStreamConsumer was called after the registration, in ms from the registration's start. */
    def looksAfterRegistration: Seq[Long] = {
      val registration = began.indexWhere(_._1 == "RegisterStreamConsumer")
      val registered = began(registration)._2
      began.drop(registration + 1).collect { case ("DescribeStreamConsumer", at) => at - registered }.toVector
    }

    override def streamArn(streamName: String): String = timed("DescribeStreamSummary")(fake.streamArn(streamName))
    override def describeConsumer(streamArn: String, name: String): Option[ConsumerDescription] =
      timed("DescribeStreamConsumer")(fake.describeConsumer(streamArn, name))
    override def describeConsumerByArn(arn: String): Option[ConsumerDescription] =
      timed("DescribeStreamConsumer")(fake.describeConsumerByArn(arn))
    override def registerConsumer(streamArn: String, name: String, tags: Map[String, String]): ConsumerDescription =
      timed("RegisterStreamConsumer")(fake.registerConsumer(streamArn, name, tags))
    override def listConsumers(streamArn: String): Seq[ConsumerDescription] =
      timed("ListStreamConsumers")(fake.listConsumers(streamArn))
    override def consumerTags(arn: String): Map[String, String] = timed("ListTagsForResource")(fake.consumerTags(arn))
    override def tagConsumer(arn: String, tags: Map[String, String]): Unit = timed("TagResource") {
      beforeTagging()
      fake.tagConsumer(arn, tags)
    }
    override def deregisterConsumer(arn: String): Unit = timed("DeregisterStreamConsumer")(fake.deregisterConsumer(arn))
    override def subscribeToShard(arn: String, shardId: String, start: IteratorStart): ShardSubscription =
      timed("SubscribeToShard")(fake.subscribeToShard(arn, shardId, start))

    /** The consumer's ARN as a query resolves it, registering consumer "q", and the clock when it has it. */
    def resolve(): (String, Long) = {
      val arn = consumer().arn
      arn -> clock()
    }

    /** A query's consumer "q" of stream "s", which it registers. */
    def consumer(): FanOutConsumer =
      new FanOutConsumer(
        this,
        "s",
        FanOutOptions(Some("q"), None, deregisterOnStop = true, 60000L, 3),
        new Path(Files.createTempDirectory("checkpoint").toString),
        new Configuration(),
        120000L,
        clock,
        ms => clock.advance(ms))
  }

  test("given a consumer ACTIVE 500 ms after its registration (kinesis-mock) and instant calls, when the query " +
    "registers it, then it looks 50, 150, 300 and 500 ms after the registration and has it at 500 ms") {
    val kinesisMock = new TimedFanOut(activationMillis = 500L, callMs = 0L)
    val (_, resolvedAt) = kinesisMock.resolve()
    kinesisMock.looksAfterRegistration shouldBe Seq(50L, 150L, 300L, 500L)
    resolvedAt - kinesisMock.startsOf("RegisterStreamConsumer").head shouldBe 500L
  }

  test("given a consumer ACTIVE 30 s after its registration (AWS takes seconds) and 40-ms calls, when the query " +
    "waits, then it finds it within 1 s plus a call, at most 6 DescribeStreamConsumer calls in any second (AWS " +
    "allows 20 per stream), at most a second apart") {
    val aws = new TimedFanOut(activationMillis = 30000L, callMs = 40L)
    val (_, resolvedAt) = aws.resolve()
    val registered = aws.startsOf("RegisterStreamConsumer").head
    resolvedAt - registered should (be > 30000L and be <= 30000L + 1000L + 40L)
    val looks = aws.startsOf("DescribeStreamConsumer")
    looks.map(at => looks.count(other => other >= at && other < at + 1000L)).max shouldBe 6
    looks.zip(looks.tail).map { case (a, b) => b - a }.max shouldBe 1000L
  }

  test("given calls of 100 ms on an endpoint that drops registration tags (kinesis-mock), when the query registers " +
    "its consumer, then it looks from the registration on, a look due during a call made as the call ends, and " +
    "checks and adds the tags only once the consumer is ACTIVE") {
    val slow = new TimedFanOut(activationMillis = 1000L, callMs = 100L)
    slow.fake.fanOut.dropsRegistrationTags = true
    val (arn, _) = slow.resolve()
    slow.looksAfterRegistration shouldBe Seq(100L, 200L, 300L, 500L, 750L, 1050L)
    val activeSeen = slow.startsOf("DescribeStreamConsumer").last
    slow.startsOf("ListTagsForResource").head should be > activeSeen
    slow.startsOf("TagResource") should have size 1
    ConsumerTags.checkpointOf(slow.fake.consumerTags(arn)) should not be empty
  }

  test("given the consumer resolved in the background and TagResource slow to answer, when a batch asks for the " +
    "ARN, then it gets it while the tags are still being added, and they are added") {
    val t = new TimedFanOut(activationMillis = 500L, callMs = 0L)
    t.fake.fanOut.dropsRegistrationTags = true
    val tagging = new CountDownLatch(1)
    val answer = new CountDownLatch(1)
    val answered = new AtomicBoolean(false)
    t.beforeTagging = () => {
      tagging.countDown()
      answer.await(10, TimeUnit.SECONDS)
      answered.set(true)
    }
    val consumer = t.consumer()
    consumer.resolveInBackground()
    tagging.await(10, TimeUnit.SECONDS) shouldBe true
    consumer.arn shouldBe t.fake.describeConsumer(t.fake.streamArn("s"), "q").get.arn
    answered.get shouldBe false // the ARN came while TagResource was still waiting for its answer
    answer.countDown()
    consumer.stop() // waits for the resolving thread, tags included, before it deregisters the consumer
    t.startsOf("TagResource") should have size 1
  }
}
