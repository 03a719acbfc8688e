package io.github.sparkkinesis.options

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** The options of CloudWatch publishing (kinesis.emitConsumerLagMetrics and kinesis.cloudwatch.*). */
class CloudWatchOptionsSuite extends AnyFunSuite with Matchers {

  private val on = Map("kinesis.streamName" -> "orders", "kinesis.emitConsumerLagMetrics" -> "true")

  private def failure(options: Map[String, String]): String =
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(options)).getMessage

  test("given no option, then nothing is published; turned on, then the namespace and dimensions are the defaults") {
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "orders")).cloudWatch shouldBe None
    KinesisSourceOptions.parse(on).cloudWatch shouldBe Some(CloudWatchSettings(
      "SparkKinesis",
      Seq("StreamName" -> "{stream}", "Application" -> "{app}"),
      None,
      None))
    KinesisOptionsRegistry.CloudWatchDimensions.defaultText shouldBe Some("StreamName={stream},Application={app}")
  }

  test("given a namespace, dimensions, an endpoint and a region, then they come through as given") {
    val parsed = KinesisSourceOptions.parse(on ++ Map(
      "kinesis.cloudwatch.namespace" -> "Team/Orders ETL",
      "kinesis.cloudwatch.dimensions" -> " Stream = {stream} ,Query={queryId},Env=prod",
      "kinesis.cloudwatch.endpointUrl" -> "http://127.0.0.1:4566",
      "kinesis.cloudwatch.region" -> "eu-west-1")).cloudWatch.get
    parsed.namespace shouldBe "Team/Orders ETL"
    parsed.dimensions shouldBe Seq("Stream" -> "{stream}", "Query" -> "{queryId}", "Env" -> "prod")
    parsed.endpoint.map(_.toString) shouldBe Some("http://127.0.0.1:4566")
    parsed.region shouldBe Some("eu-west-1")
  }

  test("given bad dimensions or an AWS namespace, then the message names the option, echoes the value and says why") {
    val cases = Seq(
      "kinesis.cloudwatch.dimensions" -> "StreamName" -> "a pair is not Name=Value",
      "kinesis.cloudwatch.dimensions" -> "A=1,A=2" -> "it names a dimension twice",
      "kinesis.cloudwatch.dimensions" -> "Job={job}" -> "unknown placeholder(s) {job}",
      "kinesis.cloudwatch.dimensions" -> (1 to 31).map(i => s"D$i=v").mkString(",") -> "CloudWatch takes at most 30",
      "kinesis.cloudwatch.namespace" -> "AWS/Kinesis" -> "it is not a custom CloudWatch namespace",
      "kinesis.cloudwatch.namespace" -> "   " -> "it is not a custom CloudWatch namespace")
    cases.foreach { case ((option, value), why) =>
      val message = failure(on + (option -> value))
      message should include(s"option $option")
      message should include(why)
    }
  }

  test("given a CloudWatch option without kinesis.emitConsumerLagMetrics, then it is refused, naming both") {
    failure(Map("kinesis.streamName" -> "orders", "kinesis.cloudwatch.namespace" -> "Mine")) shouldBe
      "Option kinesis.cloudwatch.namespace is set without kinesis.emitConsumerLagMetrics: it only shapes what that " +
      "option publishes to CloudWatch; set kinesis.emitConsumerLagMetrics to true, or remove it."
  }
}
