package io.github.sparkkinesis.client

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/**
 * How the SDK client names a stream in its requests, and the fake's model of what AWS does with them: a stream given by
 * ARN (another account's, shared by a resource-based policy) goes in StreamARN; an ARN given as StreamName is refused
 * (InvalidArgumentException), and a name resolves in the caller's account only.
 */
class StreamAddressingSuite extends AnyFunSuite with Matchers {

  private val otherAccount = "210987654321"
  private val arn = s"arn:aws:kinesis:us-east-1:$otherAccount:stream/orders"

  /** (StreamName, StreamARN) of every stream-level request the SDK clients build for `stream`. */
  private def requests(stream: String): Map[String, (Option[String], Option[String])] = {
    val list = SdkKinesisClient.listShardsRequest(stream)
    val iterator = SdkKinesisClient.shardIteratorRequest(stream, "shardId-000000000000").build()
    val summary = SdkFanOutClient.describeStreamSummaryRequest(stream)
    val records = SdkKinesisClient.getRecordsRequest(stream, "iterator", 100)
    Map(
      "GetRecords" -> (None -> Option(records.streamARN)),
      "ListShards" -> (Option(list.streamName) -> Option(list.streamARN)),
      "GetShardIterator" -> (Option(iterator.streamName) -> Option(iterator.streamARN)),
      "DescribeStreamSummary" -> (Option(summary.streamName) -> Option(summary.streamARN)))
  }

  test("given a stream named by ARN, when the SDK clients build their requests, then each names it in StreamARN " +
    "and none in StreamName") {
    // Given / When
    val byArn = requests(arn)
    val byName = requests("orders")

    // Then
    byArn.foreach { case (operation, named) => withClue(operation)(named shouldBe ((None, Some(arn)))) }
    (byName - "GetRecords").foreach { case (op, named) => withClue(op)(named shouldBe ((Some("orders"), None))) }
    byName("GetRecords") shouldBe ((None, None)) // the iterator names the stream
  }

  test("given another account's stream, when calls name it, then the fake finds it by ARN only and refuses an ARN " +
    "given as StreamName, as AWS does") {
    // Given
    val fake = new FakeKinesisClient()
    fake.createStream(arn, 2)

    // When
    val refusedArnAsName = the[KinesisClientException] thrownBy fake.addressed(Some(arn), None)
    val byName = the[ResourceMissingException] thrownBy fake.listShards("orders")

    // Then
    refusedArnAsName.getMessage should include("InvalidArgumentException")
    refusedArnAsName.getMessage should include("[a-zA-Z0-9_.-]+")
    byName.getMessage should include("orders")
    fake.listShards(arn).map(_.shardId) shouldBe Seq("shardId-000000000000", "shardId-000000000001")
    fake.streamArn(arn) shouldBe arn
    (requests(arn) - "GetRecords").values.foreach { case (name, byArn) =>
      fake.addressed(name, byArn) shouldBe "orders"
    }
    val iterator = fake.shardIterator(arn, "shardId-000000000000", IteratorStart.TrimHorizon)
    fake.getRecords(arn, iterator, 10).records shouldBe empty // the request carries the ARN: found
  }
}
