package io.github.sparkkinesis.client

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.options.KinesisSourceOptions

class ConsumerTagsSuite extends AnyFunSuite with Matchers {

  /** What both Kinesis' API reference and AWS' general tagging rules (and kinesis-mock) allow in a tag. */
  private val AllowedValue = "[\\p{L}\\p{N}\\p{Z}_./=+\\-@]{0,256}"

  test("given checkpoint locations with characters tags do not allow, when tagged and read back, then each round " +
    "trips and every tag value keeps to the characters both AWS' documentations allow, within 256 characters") {
    val locations = Seq(
      "file:/tmp/checkpoints/orders/sources/0",
      "s3a://bucket/a b/100%+done:#?&/sources/0",
      "hdfs://nn:8020/ckpt/Zürich/日本/sources/0",
      "gs://b/" + "x" * 700 + "/sources/0")
    locations.foreach { location =>
      val tags = ConsumerTags.ofCheckpoint(location)
      ConsumerTags.checkpointOf(tags) shouldBe Some(location)
      ConsumerTags.registeredByConnector(tags) shouldBe true
      all(tags.values) should fullyMatch regex AllowedValue
      all(tags.keys.map(_.length)) should be <= ConsumerTags.MaxKeyLength
    }
    ConsumerTags.ofCheckpoint(locations.last).keySet shouldBe
      Set("spark-kinesis/checkpoint", "spark-kinesis/checkpoint/2", "spark-kinesis/checkpoint/3")
  }

  test("given a checkpoint location too long for the connector's tags, then the consumer is marked as the " +
    "connector's and names no checkpoint") {
    val tags = ConsumerTags.ofCheckpoint("file:/" + "y" * (4 * 256 + 1))
    tags shouldBe Map("spark-kinesis/checkpoint" -> "")
    ConsumerTags.registeredByConnector(tags) shouldBe true
    ConsumerTags.checkpointOf(tags) shouldBe None
    ConsumerTags.registeredByConnector(Map("team" -> "orders")) shouldBe false
  }

  private val base = Map(
    "kinesis.streamName" -> "s",
    "kinesis.region" -> "us-east-1",
    "kinesis.consumerType" -> "EFO",
    "kinesis.consumerName" -> "q")

  private def refusal(tags: String, options: Map[String, String] = base): String =
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(options + ("kinesis.consumerTags" -> tags)))
      .getMessage

  test("given kinesis.consumerTags, when options are parsed, then valid tags reach the fan-out options and tags " +
    "Kinesis would refuse are refused naming the option, the value and the tag") {
    KinesisSourceOptions.parse(base + ("kinesis.consumerTags" -> """{"team": "orders", "cost:centre": "47% / eu"}"""))
      .fanOut.get.tags shouldBe Map("team" -> "orders", "cost:centre" -> "47% / eu")
    KinesisSourceOptions.parse(base).fanOut.get.tags shouldBe empty

    val many = (1 to 47).map(i => s""""k$i": "v"""").mkString("{", ",", "}")
    val cases = Seq(
      "team=orders" -> "it is not a JSON object",
      """["team"]""" -> "it is not a JSON object",
      """{"team": 1}""" -> "the value of tag 'team' is not a JSON string",
      many -> "it has 47 tags, more than 46",
      s"""{"${"k" * 129}": "v"}""" -> "is longer than 128 characters",
      s"""{"team": "${"v" * 257}"}""" -> "the value of tag 'team' is longer than 256 characters",
      """{"team#1": "v"}""" -> "tag 'team#1' has a character other than",
      """{"team": "a#b"}""" -> "tag 'team' has a character other than",
      """{"AWS:team": "v"}""" -> "starts with aws:, which AWS reserves",
      """{"spark-kinesis/checkpoint": "v"}""" -> "starts with spark-kinesis/, which the connector reserves",
      """{"": "v"}""" -> "a tag key is empty")
    cases.foreach { case (value, problem) =>
      val message = refusal(value)
      message should include(s"Invalid value '$value' for option kinesis.consumerTags: ")
      message should include(problem)
      message should include("Accepted: a JSON object of tag keys to values")
    }
  }

  test("given kinesis.consumerTags with kinesis.consumerArn, when options are parsed, then it is refused: the " +
    "connector never registers that consumer") {
    val options = base - "kinesis.consumerName" +
      ("kinesis.consumerArn" -> "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000")
    refusal("""{"team": "orders"}""", options) should include(
      "Option kinesis.consumerTags is set without kinesis.consumerName")
  }
}
