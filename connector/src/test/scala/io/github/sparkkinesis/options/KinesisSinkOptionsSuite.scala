package io.github.sparkkinesis.options

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class KinesisSinkOptionsSuite extends AnyFunSuite with Matchers {

  private def error(options: (String, String)*) =
    intercept[IllegalArgumentException](KinesisSinkOptions.parse(options.toMap)).getMessage

  test("defaults: no stream (rows may name theirs), the KPL's connection count, aggregation on, 30 s TTL, " +
    "100,000 rows and 128 MiB unconfirmed per executor") {
    val parsed = KinesisSinkOptions.parse(Map("kinesis.region" -> "us-east-1"))
    parsed.stream shouldBe None
    (parsed.recordMaxBufferedTimeMs, parsed.maxConnections, parsed.aggregationEnabled, parsed.recordTtlMs) shouldBe
      ((100L, 24, true, 30000L))
    (parsed.maxPendingRecordsPerExecutor, parsed.maxPendingBytesPerExecutor) shouldBe ((100000, 128L << 20))
    parsed.strictKeyOrder shouldBe false
    parsed.client.verifyCertificate shouldBe true
    parsed.putRecords shouldBe false
  }

  test("sink options in any key case, shared options as for the source") {
    val parsed = KinesisSinkOptions.parse(Map(
      "KINESIS.STREAMNAME" -> "out",
      "kinesis.endpointUrl" -> "https://127.0.0.1:4567",
      "kinesis.verifycertificate" -> "false",
      "kinesis.sink.maxConnections" -> "4",
      "kinesis.sink.aggregationEnabled" -> "FALSE",
      "kinesis.sink.strictKeyOrder" -> "true",
      "kinesis.sink.recordTtl" -> "5000",
      "kinesis.awsAccessKeyId" -> "id",
      "kinesis.awsSecretKey" -> "secret",
      "kinesis.sink.maxPendingRecordsPerExecutor" -> "5000",
      "kinesis.sink.maxPendingBytesPerExecutor" -> "2097152"))
    parsed.stream shouldBe Some("out")
    (parsed.maxPendingRecordsPerExecutor, parsed.maxPendingBytesPerExecutor) shouldBe ((5000, 2097152L))
    parsed.client.endpointUrl shouldBe Some(URI.create("https://127.0.0.1:4567"))
    parsed.client.verifyCertificate shouldBe false
    (parsed.maxConnections, parsed.aggregationEnabled, parsed.recordTtlMs) shouldBe ((4, false, 5000L))
    parsed.strictKeyOrder shouldBe true
    parsed.client.credentials.map(_.accessKeyId) shouldBe Some("id")
  }

  test("bad values fail naming the option, echoing the value and saying what is accepted") {
    error("kinesis.sink.maxConnections" -> "0") should
      (include("kinesis.sink.maxConnections") and include("'0'") and include("1 to 256"))
    error("kinesis.sink.recordTtl" -> "50") should include("kinesis.sink.recordTtl")
    error("kinesis.sink.aggregationEnabled" -> "yes") should include("kinesis.sink.aggregationEnabled")
    error("kinesis.sink.strictKeyOrder" -> "always") should include("kinesis.sink.strictKeyOrder")
    error("kinesis.sink.maxPendingBytesPerExecutor" -> "1000") should
      (include("kinesis.sink.maxPendingBytesPerExecutor") and include("'1000'") and include("from 1048576"))
    error("kinesis.sink.recordTtlMs" -> "10") should include("Did you mean kinesis.sink.recordTtl")
  }

  test("the KPL speaks HTTPS to a host and port only: http:// and paths are refused, naming the option") {
    error("kinesis.endpointUrl" -> "http://127.0.0.1:4568") should
      (include("kinesis.endpointUrl") and include("HTTPS only") and include("kinesis.verifyCertificate") and
        include("kinesis.sink.producer=PutRecords"))
    error("kinesis.endpointUrl" -> "https://127.0.0.1:4567/kinesis") should include("remove the path")
  }

  test("kinesis.sink.producer=PutRecords: no aggregation, plain http:// endpoints, and no aggregation asked for") {
    val parsed = KinesisSinkOptions.parse(Map(
      "kinesis.sink.producer" -> "putrecords",
      "kinesis.region" -> "us-east-1",
      "kinesis.endpointUrl" -> "http://127.0.0.1:4568"))
    (parsed.putRecords, parsed.aggregationEnabled) shouldBe ((true, false))
    parsed.toString should include("producer=PutRecords")
    KinesisSinkOptions.parse(Map("kinesis.sink.producer" -> "PutRecords", "kinesis.sink.aggregationEnabled" -> "false"))
      .putRecords shouldBe true
    error("kinesis.sink.producer" -> "PutRecords", "kinesis.sink.aggregationEnabled" -> "true") should
      (include("kinesis.sink.aggregationEnabled") and include("kinesis.sink.producer=KPL") and
        include("only the KPL aggregates"))
    error("kinesis.sink.producer" -> "SDK") should
      (include("kinesis.sink.producer") and include("'SDK'") and include("KPL or PutRecords"))
  }

  test("a source-only option with a bad value still fails the sink, so shared option maps stay valid") {
    error("kinesis.startingPosition" -> "BEGINNING") should include("kinesis.startingPosition")
  }
}
