package io.github.sparkkinesis.payloads

import java.util.Base64

import org.apache.spark.sql.Row
import org.apache.spark.sql.functions.{col, expr}
import org.apache.spark.sql.types._

import io.github.sparkkinesis.payloads.functions.dynamodb_change

/** dynamodb_change on records in the format AWS documents for Kinesis Data Streams for DynamoDB. */
class DynamoDbChangeSuite extends PayloadSuiteBase {

  private val itemSchema = StructType.fromDDL(
    "pk STRING, sk BIGINT, qty INT, small TINYINT, ratio DOUBLE, weight FLOAT, price DECIMAL(10,2), " +
      "photo BINARY, active BOOLEAN, note STRING, " +
      "address STRUCT<city: STRING, geo: STRUCT<lat: DOUBLE, lon: DOUBLE>, lines: ARRAY<STRING>>, " +
      "history ARRAY<STRUCT<at: BIGINT, status: STRING>>, tags ARRAY<STRING>, sizes ARRAY<DECIMAL(4,1)>, " +
      "thumbs ARRAY<BINARY>, counters MAP<STRING, BIGINT>")

  private def b64(text: String) = Base64.getEncoder.encodeToString(text.getBytes("UTF-8"))

  /** An image with every DynamoDB type, nested maps and lists, and an attribute the schema does not name. */
  private val fullImage =
    s"""{"pk":{"S":"order#1"},"sk":{"N":"1764201600"},"qty":{"N":"3"},"small":{"N":"-7"},"ratio":{"N":"0.25"},
       |"weight":{"N":"1.5"},"price":{"N":"19.9"},"photo":{"B":"${b64("png")}"},"active":{"BOOL":true},
       |"note":{"NULL":true},"extra":{"M":{"ignored":{"L":[{"S":"x"}]}}},
       |"address":{"M":{"city":{"S":"Lyon"},"geo":{"M":{"lat":{"N":"45.76"},"lon":{"N":"4.84"}}},
       |"lines":{"L":[{"S":"1 rue A"},{"NULL":true}]}}},
       |"history":{"L":[{"M":{"at":{"N":"1"},"status":{"S":"new"}}},{"M":{"at":{"N":"1E+1"},"status":{"S":"paid"}}}]},
       |"tags":{"SS":["gift","fragile"]},"sizes":{"NS":["1.5","42"]},"thumbs":{"BS":["${b64("a")}","${b64("bc")}"]},
       |"counters":{"M":{"views":{"N":"10"},"likes":{"N":"2"}}}}""".stripMargin

  private def record(eventName: String, dynamodb: String, eventId: String = "e-1") =
    utf8(s"""{"awsRegion":"eu-west-3","dynamodb":{$dynamodb},"eventID":"$eventId","eventName":"$eventName",
            |"userIdentity":null,"recordFormat":"application/json","tableName":"Orders",
            |"eventSource":"aws:dynamodb"}""".stripMargin)

  private val keys = """"Keys":{"pk":{"S":"order#1"},"sk":{"N":"1764201600"}}"""

  /** The decoded records, the creation time as microseconds since the epoch. */
  private def decode(payloads: Array[Byte]*) =
    records(payloads: _*).select(dynamodb_change(col("data"), itemSchema).as("c")).select("c.*")
      .withColumn("approximateCreationDateTime", expr("unix_micros(approximateCreationDateTime)")).collect()

  test("Given an INSERT with every DynamoDB type, when decoded, then the new image is typed by the item schema") {
    val Array(change) = decode(record(
      "INSERT",
      s""""ApproximateCreationDateTime":1764201600123,$keys,"NewImage":$fullImage,"SizeBytes":512,
         |"ApproximateCreationDateTimePrecision":"MILLISECOND"""".stripMargin))
    change.getAs[String]("eventName") shouldBe "INSERT"
    change.getAs[String]("eventID") shouldBe "e-1"
    change.getAs[String]("tableName") shouldBe "Orders"
    change.getAs[Long]("approximateCreationDateTime") shouldBe 1764201600123000L
    change.getAs[Row]("keys").getAs[String]("pk") shouldBe "order#1"
    change.getAs[Row]("keys").getAs[Long]("sk") shouldBe 1764201600L
    change.getAs[Row]("keys").isNullAt(2) shouldBe true
    change.getAs[Row]("oldImage") shouldBe null
    change.getAs[String]("error") shouldBe null

    val image = change.getAs[Row]("newImage")
    image.getAs[String]("pk") shouldBe "order#1"
    image.getAs[Long]("sk") shouldBe 1764201600L
    image.getAs[Int]("qty") shouldBe 3
    image.getAs[Byte]("small") shouldBe (-7: Byte)
    image.getAs[Double]("ratio") shouldBe 0.25
    image.getAs[Float]("weight") shouldBe 1.5f
    image.getAs[java.math.BigDecimal]("price") shouldBe new java.math.BigDecimal("19.90")
    new String(image.getAs[Array[Byte]]("photo"), "UTF-8") shouldBe "png"
    image.getAs[Boolean]("active") shouldBe true
    image.isNullAt(image.fieldIndex("note")) shouldBe true
    image.getAs[Row]("address") shouldBe Row("Lyon", Row(45.76, 4.84), Seq("1 rue A", null))
    image.getAs[Seq[Row]]("history") shouldBe Seq(Row(1L, "new"), Row(10L, "paid"))
    image.getAs[Seq[String]]("tags") shouldBe Seq("gift", "fragile")
    image.getAs[Seq[java.math.BigDecimal]]("sizes") shouldBe
      Seq(new java.math.BigDecimal("1.5"), new java.math.BigDecimal("42.0"))
    image.getAs[Seq[Array[Byte]]]("thumbs").map(new String(_, "UTF-8")) shouldBe Seq("a", "bc")
    image.getAs[Map[String, Long]]("counters") shouldBe Map("views" -> 10L, "likes" -> 2L)
  }

  test("Given MODIFY and REMOVE with microsecond precision, then images and times are exact, REMOVE has no new image") {
    val Array(modify, remove) = decode(
      record(
        "MODIFY",
        s""""ApproximateCreationDateTime":1764201600123456,$keys,"NewImage":{"pk":{"S":"order#1"},"qty":{"N":"4"}},
           |"OldImage":{"pk":{"S":"order#1"},"qty":{"N":"3"}},
           |"ApproximateCreationDateTimePrecision":"MICROSECOND"""".stripMargin,
        "e-2"),
      record(
        "REMOVE",
        s""""ApproximateCreationDateTime":1764201600999999,$keys,"OldImage":{"pk":{"S":"order#1"},"qty":{"N":"4"}},
           |"ApproximateCreationDateTimePrecision":"MICROSECOND"""".stripMargin,
        "e-3"))
    modify.getAs[Long]("approximateCreationDateTime") shouldBe 1764201600123456L
    modify.getAs[Row]("newImage").getAs[Int]("qty") shouldBe 4
    modify.getAs[Row]("oldImage").getAs[Int]("qty") shouldBe 3
    remove.getAs[String]("eventName") shouldBe "REMOVE"
    remove.getAs[Long]("approximateCreationDateTime") shouldBe 1764201600999999L
    remove.getAs[Row]("newImage") shouldBe null
    remove.getAs[Row]("oldImage").getAs[Int]("qty") shouldBe 4
  }

  test("Given a record without a precision, then the creation time's magnitude says microseconds or milliseconds") {
    DynamoDbChange.microseconds(new java.math.BigDecimal("1764201600123456"), null) shouldBe 1764201600123456L
    DynamoDbChange.microseconds(new java.math.BigDecimal("1764201600123"), null) shouldBe 1764201600123000L
    DynamoDbChange.microseconds(new java.math.BigDecimal("1764201600.5"), null) shouldBe 1764201600500000L
    DynamoDbChange.microseconds(new java.math.BigDecimal("1764201600123"), "MILLISECOND") shouldBe 1764201600123000L
  }

  private def withImage(attribute: String) =
    record("INSERT", s"""$keys,"NewImage":{"pk":{"S":"order#1"},$attribute}""")

  private val malformed = Seq(
    "a fraction into bigint" -> (withImage(""""sk":{"N":"1.5"}""") ->
      "attribute newImage.sk's number 1.5 does not fit the item schema's bigint"),
    "an int overflow" -> (withImage(""""qty":{"N":"2147483648"}""") -> "newImage.qty's number 2147483648 does not fit"),
    "a tinyint overflow" -> (withImage(""""small":{"N":"128"}""") -> "newImage.small's number 128 does not fit"),
    "more decimals than the scale" -> (withImage(""""price":{"N":"1.999"}""") ->
      "newImage.price's number 1.999 does not fit the item schema's decimal(10,2)"),
    "more digits than the precision" -> (withImage(""""price":{"N":"123456789"}""") -> "does not fit"),
    "a nested number that does not fit" ->
      (withImage(""""history":{"L":[{"M":{"at":{"N":"x"}}}]}""") -> "attribute newImage.history[].at's number x"),
    "a string into a number" -> (withImage(""""qty":{"S":"3"}""") ->
      "attribute newImage.qty is of DynamoDB type S, which the item schema's int cannot hold"),
    "a list into a struct" -> (withImage(""""address":{"L":[]}""") -> "newImage.address is of DynamoDB type L"),
    "bad base64" -> (withImage(""""photo":{"B":"%%%"}""") -> "newImage.photo's B is not base64"),
    "an attribute with two types" -> (withImage(""""note":{"S":"a","N":"1"}""") -> "more than one DynamoDB type"),
    "NULL false" -> (withImage(""""note":{"NULL":false}""") -> "has NULL false, not true"),
    "another event source" -> (utf8("""{"eventName":"INSERT","eventSource":"aws:s3"}""") ->
      "eventSource is 'aws:s3', not aws:dynamodb"),
    "no eventName" -> (utf8("""{"dynamodb":{}}""") -> "eventName is missing, not INSERT, MODIFY or REMOVE"),
    "a bad precision" -> (record(
      "INSERT",
      """"ApproximateCreationDateTime":1,
      |"ApproximateCreationDateTimePrecision":"SECOND"""".stripMargin) -> "Precision is 'SECOND'"),
    "not JSON" -> (utf8("{\"eventName\":") -> "the JSON is malformed"),
    "empty" -> (Array.emptyByteArray -> "the record is empty"))

  test("Given values that do not fit and records that are not change records, when PERMISSIVE, then error says why") {
    val decoded = decode(malformed.map(_._2._1): _*)
    assertMalformed(decoded.toSeq, malformed) { row =>
      row.getAs[Row]("newImage") shouldBe null
      row.getAs[String]("eventName") shouldBe null
    }
  }

  test("Given a value that does not fit, when FAILFAST, then the query fails naming the attribute") {
    val ddl = "pk STRING, qty INT"
    failureOf(records(withImage(""""qty":{"N":"1.5"}""")).select(dynamodb_change(col("data"), ddl, "FAILFAST"))
      .collect()) should include("dynamodb_change: attribute newImage.qty's number 1.5 does not fit the item " +
      "schema's int. The record was not decoded (mode FAILFAST)")
  }

  test("Given the item schema as DDL or JSON, then both type the images alike; an unsupported type is refused") {
    val payload = withImage(""""qty":{"N":"5"}""")
    val asJson = StructType.fromDDL("pk STRING, qty INT").json
    Seq("pk STRING, qty INT", asJson).foreach { schema =>
      records(payload).select(dynamodb_change(col("data"), schema, "PERMISSIVE").as("c"))
        .select("c.newImage.qty").head().getInt(0) shouldBe 5
    }
    the[IllegalArgumentException] thrownBy dynamodb_change(col("data"), "pk STRING, at TIMESTAMP", "PERMISSIVE") should
      have message "dynamodb_change: the item schema gives at the type timestamp, which DynamoDB JSON cannot give; " +
      "use string, binary, boolean, tinyint/smallint/int/bigint, float/double, decimal, array (L, SS, NS, BS), " +
      "map<string, ...> or struct (M), and convert the column afterwards"
  }
}
