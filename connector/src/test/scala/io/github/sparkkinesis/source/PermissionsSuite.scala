package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.client.{FakeKinesisClient, ManualClock}
import io.github.sparkkinesis.source.reading.SubscriptionCache

/**
 * The IAM policies of docs/security.md against the calls queries make: every Kinesis operation the fake client saw
 * during a polling query, and during an enhanced fan-out query that registers its consumer, is allowed by the page's
 * policy for that kind of query.
 */
class PermissionsSuite extends AnyFunSuite with Matchers {

  private lazy val permissions: String = {
    val page = new String(Files.readAllBytes(Paths.get("..", "docs", "security.md")), UTF_8)
    val start = page.indexOf("\n## Permissions")
    withClue("docs/security.md has no '## Permissions' section: ")(start should be >= 0)
    val end = page.indexOf("\n## ", start + 1)
    page.substring(start, if (end < 0) page.length else end)
  }

  /** The `kinesis:` actions of the first JSON policy after the page's paragraph starting with `intro`. */
  private def policyActions(intro: String): Set[String] = {
    val at = permissions.indexOf("\n" + intro)
    withClue(s"docs/security.md's Permissions section has no paragraph starting '$intro': ")(at should be >= 0)
    val open = permissions.indexOf("```json", at)
    val policy = permissions.substring(open, permissions.indexOf("```", open + 7))
    "\"kinesis:([A-Za-z]+)\"".r.findAllMatchIn(policy).map(_.group(1)).toSet
  }

  /** A query over a stream that is split while it runs, drained; the operations the fake saw. */
  private def operationsOf(options: Map[String, String]): Set[String] = {
    val clock = new ManualClock()
    val fake = new FakeKinesisClient(clock)
    val shards = fake.createStream("s", 2)
    val driver = new MicroBatchDriver(fake, options + ("kinesis.startingPosition" -> "TRIM_HORIZON"), clock = clock)
    (1 to 20).foreach(i => fake.putRecord("s", s"k$i", Array[Byte](1)))
    driver.drain()
    fake.splitShard("s", shards.head, BigInt(2).pow(126))
    (1 to 20).foreach(i => fake.putRecord("s", s"k$i", Array[Byte](2)))
    driver.drain().size shouldBe 20
    driver.stream.stop()
    SubscriptionCache.shared.evict(0L)
    fake.operationsCalled
  }

  test("given a polling query, when it reads through a reshard, then the reading policy of docs/security.md allows " +
    "every Kinesis call it made") {
    // Given / When
    val called = operationsOf(Map.empty)

    // Then
    called should contain allOf ("ListShards", "GetShardIterator", "GetRecords")
    policyActions("Reading (") should contain allElementsOf called
  }

  test("given an enhanced fan-out query that registers its consumer, when it reads through a reshard and stops, then " +
    "the fan-out policy of docs/security.md allows every Kinesis call it made, DescribeStreamSummary included") {
    // Given / When
    val called = operationsOf(Map("kinesis.consumerType" -> "EFO", "kinesis.consumerName" -> "q"))

    // Then
    called should contain allOf (
      "DescribeStreamSummary",
      "RegisterStreamConsumer",
      "DescribeStreamConsumer",
      "SubscribeToShard",
      "DeregisterStreamConsumer")
    policyActions("Enhanced fan-out (") should contain allElementsOf called
  }
}
