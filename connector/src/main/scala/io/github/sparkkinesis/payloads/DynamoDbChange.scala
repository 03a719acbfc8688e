package io.github.sparkkinesis.payloads

import com.fasterxml.jackson.core.{JsonParser, JsonToken}
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * A Kinesis Data Streams for DynamoDB change record (the JSON DynamoDB writes to the stream) as a row of
 * [[DynamoDbChange.schema]]`(itemSchema)`: its keys and images typed by `itemSchema`, read from DynamoDB JSON by
 * [[AttributeReader]]s. Attributes the schema does not name are skipped. A record that is not a change record (no
 * eventName INSERT, MODIFY or REMOVE, another eventSource) or whose value does not fit the schema is malformed.
 */
case class DynamoDbChange(child: Expression, itemSchema: StructType, mode: PayloadMode) extends PayloadExpression {
  import DynamoDbChange._

  @transient private lazy val keys = new AttributeReader.StructReader("keys", itemSchema)
  @transient private lazy val newImage = new AttributeReader.StructReader("newImage", itemSchema)
  @transient private lazy val oldImage = new AttributeReader.StructReader("oldImage", itemSchema)

  // Checks the item schema when the expression is built, so that an unsupported type fails the query at planning.
  new AttributeReader.StructReader("", itemSchema)

  override lazy val dataType: DataType = schema(itemSchema)
  override def prettyName: String = "dynamodb_change"

  override protected def decode(bytes: Array[Byte]): Any =
    JsonReading.document(JsonReading.parser(bytes), "a DynamoDB change record")(record)

  override protected def malformed(reason: String): Any = {
    val row = new GenericInternalRow(Fields.length)
    row.update(Error, UTF8String.fromString(reason))
    row
  }

  override protected def withNewChildInternal(newChild: Expression): DynamoDbChange = copy(child = newChild)

  private def record(p: JsonParser): GenericInternalRow = {
    val row = new GenericInternalRow(Fields.length)
    JsonReading.fields(p, "the record") {
      case "eventName" => row.update(EventName, JsonReading.string(p, "eventName"))
      case "eventID" => row.update(EventId, JsonReading.string(p, "eventID"))
      case "tableName" => row.update(TableName, JsonReading.string(p, "tableName"))
      case "eventSource" =>
        val source = JsonReading.string(p, "eventSource")
        if (source != null && source != DynamoDbSource)
          PayloadError(s"eventSource is '$source', not aws:dynamodb: this is not a DynamoDB change record")
      case "dynamodb" => change(p, row)
      case _ => JsonReading.skip(p)
    }
    if (!EventNames.contains(row.getUTF8String(EventName)))
      PayloadError(s"eventName is ${Option(row.getUTF8String(EventName)).fold("missing")(n => s"'$n'")}, not " +
        "INSERT, MODIFY or REMOVE: this is not a DynamoDB change record")
    row
  }

  /** The `dynamodb` object's keys, images and creation time into `row`. */
  private def change(p: JsonParser, row: GenericInternalRow): Unit = {
    var created: java.math.BigDecimal = null
    var precision: String = null
    JsonReading.fields(p, "dynamodb") {
      case "Keys" => row.update(Keys, keys.item(p, "Keys"))
      case "NewImage" => row.update(NewImage, newImage.item(p, "NewImage"))
      case "OldImage" => row.update(OldImage, oldImage.item(p, "OldImage"))
      case "ApproximateCreationDateTime" =>
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT && p.currentToken() != JsonToken.VALUE_NUMBER_FLOAT)
          PayloadError(s"ApproximateCreationDateTime is ${JsonReading.describe(p, p.currentToken())}, not a number")
        created = p.getDecimalValue
      case "ApproximateCreationDateTimePrecision" =>
        precision = Option(JsonReading.string(p, "ApproximateCreationDateTimePrecision")).map(_.toString).orNull
      case _ => JsonReading.skip(p)
    }
    if (created != null) row.update(Created, microseconds(created, precision))
  }
}

object DynamoDbChange {
  private val DynamoDbSource = UTF8String.fromString("aws:dynamodb")
  private val EventNames = Set("INSERT", "MODIFY", "REMOVE").map(UTF8String.fromString)
  private val Fields =
    Seq("eventName", "eventID", "tableName", "approximateCreationDateTime", "keys", "newImage", "oldImage", "error")
  private val EventName = 0
  private val EventId = 1
  private val TableName = 2
  private val Created = 3
  private val Keys = 4
  private val NewImage = 5
  private val OldImage = 6
  private val Error = 7

  /** The decoded record for items of `itemSchema`; `error` is null unless the record is malformed. */
  def schema(itemSchema: StructType): StructType = {
    val item = AttributeReader.nullable(itemSchema)
    StructType(Fields.map {
      case "approximateCreationDateTime" => StructField("approximateCreationDateTime", TimestampType)
      case image @ ("keys" | "newImage" | "oldImage") => StructField(image, item)
      case name => StructField(name, StringType)
    })
  }

  /**
   * Microseconds since the epoch of ApproximateCreationDateTime in `precision` (the stream's setting, which records
   * name): MICROSECOND or MILLISECOND. A record that does not name it is read by magnitude: microseconds from 1e14
   * (year 5138 in milliseconds), milliseconds from 1e11 (year 5138 in seconds), seconds below (DynamoDB Streams'
   * format, which a relay may forward).
   */
  def microseconds(value: java.math.BigDecimal, precision: String): Long = {
    val unitsPerSecond = precision match {
      case "MICROSECOND" => 1000000L
      case "MILLISECOND" => 1000L
      case null if value.abs.compareTo(new java.math.BigDecimal(1e14)) >= 0 => 1000000L
      case null if value.abs.compareTo(new java.math.BigDecimal(1e11)) >= 0 => 1000L
      case null => 1L
      case other =>
        PayloadError(s"ApproximateCreationDateTimePrecision is '$other', not MILLISECOND or MICROSECOND")
    }
    try value.movePointRight(6).divide(java.math.BigDecimal.valueOf(unitsPerSecond)).setScale(
        0,
        java.math.RoundingMode.FLOOR).longValueExact()
    catch { case _: ArithmeticException => PayloadError(s"ApproximateCreationDateTime $value is out of range") }
  }
}
