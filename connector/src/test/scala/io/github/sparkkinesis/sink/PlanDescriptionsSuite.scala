package io.github.sparkkinesis.sink

import org.apache.spark.sql.types.{BinaryType, StringType, StructField, StructType}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.options.{KinesisSinkOptions, KinesisSourceOptions, PlanRedaction}
import io.github.sparkkinesis.source.KinesisScan

/** What the plan shows of the source's scan and the sink's write: never the endpoint, which Spark hides too. */
class PlanDescriptionsSuite extends AnyFunSuite with Matchers {

  private val endpoint = "https://kinesis-gateway.internal.example:8443"
  private val shared = Map(
    "kinesis.streamName" -> "orders",
    "kinesis.region" -> "eu-west-1",
    "kinesis.endpointUrl" -> endpoint,
    "kinesis.awsAccessKeyId" -> "AKIDEXAMPLE",
    "kinesis.awsSecretKey" -> "wJalrXUtnFEMI")

  test("Given an endpoint and keys, when the scan and the write describe themselves in the plan, then they name " +
    "the stream and the region, and hide the endpoint and the keys") {
    // Given
    val schema = StructType(Seq(StructField("data", BinaryType), StructField("partitionKey", StringType)))
    val sinkOptions = KinesisSinkOptions.parse(shared)

    // When
    val scan = new KinesisScan(KinesisSourceOptions.parse(shared)).description()
    val write = new KinesisWrite(sinkOptions, SinkColumns.resolve(schema, sinkOptions.stream), "batch").description()

    // Then
    scan shouldBe "KinesisScan[KinesisSourceOptions(streams=orders, region=eu-west-1, " +
      s"endpoint=${PlanRedaction.Hidden}, startingPosition=Latest)]"
    write should (startWith("KinesisWrite[KinesisSinkOptions(stream=orders, region=eu-west-1, ") and
      include(s"endpoint=${PlanRedaction.Hidden}"))
    for (description <- Seq(scan, write); hidden <- Seq("kinesis-gateway", "8443", "AKIDEXAMPLE", "wJalrXUtnFEMI"))
      withClue(description)(description should not include hidden)
  }
}
