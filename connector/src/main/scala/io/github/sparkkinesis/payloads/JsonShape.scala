package io.github.sparkkinesis.payloads

import java.io.StringWriter
import java.time.{LocalDate, OffsetDateTime}
import java.time.format.{DateTimeFormatter, DateTimeParseException}

import com.fasterxml.jackson.core.{JsonParser, JsonToken}
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * What a value of a reader JSON Schema becomes in Spark: its type, and the strict reading of a JSON value into it (a
 * value of another JSON type is a [[PayloadError]] naming where it is, `where`). JSON null is null for every shape.
 */
private[payloads] sealed abstract class JsonShape {
  def sparkType: DataType

  /** Where this value is, for messages: "field amount", "field lines[].price". */
  def where: String

  /** The Spark value of the JSON value the parser is on (its first token for an object or array). */
  final def read(p: JsonParser): Any =
    if (p.currentToken() == JsonToken.VALUE_NULL) null else readPresent(p)

  protected def readPresent(p: JsonParser): Any

  protected def mismatch(p: JsonParser, expected: String): Nothing =
    PayloadError(s"$where is ${JsonReading.describe(p, p.currentToken())}, not $expected")
}

private[payloads] object JsonShape {

  final case class Text(where: String) extends JsonShape {
    def sparkType: DataType = StringType
    protected def readPresent(p: JsonParser): Any =
      if (p.currentToken() == JsonToken.VALUE_STRING) UTF8String.fromString(p.getText) else mismatch(p, "a string")
  }

  /** JSON Schema's integer: any number without a fractional part (1.0 too) that fits 64 bits. */
  final case class WholeNumber(where: String) extends JsonShape {
    def sparkType: DataType = LongType
    protected def readPresent(p: JsonParser): Any = p.currentToken() match {
      case JsonToken.VALUE_NUMBER_INT if p.getNumberType != JsonParser.NumberType.BIG_INTEGER => p.getLongValue
      case JsonToken.VALUE_NUMBER_INT | JsonToken.VALUE_NUMBER_FLOAT =>
        val value = p.getDecimalValue
        try value.longValueExact()
        catch {
          case _: ArithmeticException =>
            mismatch(p, if (value.stripTrailingZeros.scale > 0) "an integer" else "an integer of 64 bits")
        }
      case _ => mismatch(p, "an integer")
    }
  }

  final case class RealNumber(where: String) extends JsonShape {
    def sparkType: DataType = DoubleType
    protected def readPresent(p: JsonParser): Any = p.currentToken() match {
      case JsonToken.VALUE_NUMBER_INT | JsonToken.VALUE_NUMBER_FLOAT => p.getDoubleValue
      case _ => mismatch(p, "a number")
    }
  }

  final case class Bool(where: String) extends JsonShape {
    def sparkType: DataType = BooleanType
    protected def readPresent(p: JsonParser): Any = p.currentToken() match {
      case JsonToken.VALUE_TRUE => true
      case JsonToken.VALUE_FALSE => false
      case _ => mismatch(p, "a boolean")
    }
  }

  /** A string of format date-time (RFC 3339: with an offset), as microseconds since the epoch. */
  final case class DateTime(where: String) extends JsonShape {
    def sparkType: DataType = TimestampType
    protected def readPresent(p: JsonParser): Any = {
      if (p.currentToken() != JsonToken.VALUE_STRING) mismatch(p, "a date-time string")
      val instant =
        try OffsetDateTime.parse(p.getText, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant
        catch { case _: DateTimeParseException => mismatch(p, "a date-time with an offset (RFC 3339)") }
      Math.addExact(Math.multiplyExact(instant.getEpochSecond, 1000000L), instant.getNano / 1000L)
    }
  }

  /** A string of format date (yyyy-MM-dd), as days since the epoch. */
  final case class CalendarDate(where: String) extends JsonShape {
    def sparkType: DataType = DateType
    protected def readPresent(p: JsonParser): Any = {
      if (p.currentToken() != JsonToken.VALUE_STRING) mismatch(p, "a date string")
      try Math.toIntExact(LocalDate.parse(p.getText).toEpochDay)
      catch { case _: DateTimeParseException => mismatch(p, "a date (yyyy-MM-dd)") }
    }
  }

  /** Type null: only JSON null is such a value. */
  final case class NullOnly(where: String) extends JsonShape {
    def sparkType: DataType = NullType
    protected def readPresent(p: JsonParser): Any = mismatch(p, "null")
  }

  /** A value the schema does not type (`{}`, `true`): its JSON text, whatever it is. */
  final case class AnyJson(where: String) extends JsonShape {
    def sparkType: DataType = StringType
    protected def readPresent(p: JsonParser): Any = p.currentToken() match {
      case JsonToken.VALUE_STRING => UTF8String.fromString(p.getText)
      case JsonToken.START_OBJECT | JsonToken.START_ARRAY =>
        val text = new StringWriter()
        val generator = JsonReading.factory.createGenerator(text)
        try generator.copyCurrentStructure(p)
        finally generator.close()
        UTF8String.fromString(text.toString)
      case _ => UTF8String.fromString(p.getText)
    }
  }

  final case class ArrayOf(items: JsonShape, where: String) extends JsonShape {
    def sparkType: DataType = ArrayType(items.sparkType, containsNull = true)
    protected def readPresent(p: JsonParser): Any = {
      if (p.currentToken() != JsonToken.START_ARRAY) mismatch(p, "an array")
      val values = new java.util.ArrayList[Any]()
      while (p.nextToken() != JsonToken.END_ARRAY) values.add(items.read(p))
      new GenericArrayData(values.toArray)
    }
  }

  /** An object without declared properties whose values all have one schema: a map by property name. */
  final case class MapOf(values: JsonShape, where: String) extends JsonShape {
    def sparkType: DataType = MapType(StringType, values.sparkType, valueContainsNull = true)
    protected def readPresent(p: JsonParser): Any = {
      if (p.currentToken() != JsonToken.START_OBJECT) mismatch(p, "an object")
      val keys = new java.util.ArrayList[Any]()
      val read = new java.util.ArrayList[Any]()
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        keys.add(UTF8String.fromString(p.currentName()))
        p.nextToken()
        read.add(values.read(p))
      }
      new ArrayBasedMapData(new GenericArrayData(keys.toArray), new GenericArrayData(read.toArray))
    }
  }

  /**
   * An object with declared properties: a struct of them, in the schema's order. Properties the record has and the
   * schema lacks are skipped (a writer's newer fields); properties the record lacks are null.
   */
  final case class Record(fields: Seq[(String, JsonShape)], where: String) extends JsonShape {
    def sparkType: StructType = StructType(fields.map { case (name, shape) => StructField(name, shape.sparkType) })

    private val shapes = fields.map(_._2).toArray
    private val index = {
      val byName = new java.util.HashMap[String, Integer](fields.size * 2)
      fields.map(_._1).zipWithIndex.foreach { case (name, i) => byName.put(name, i) }
      byName
    }

    protected def readPresent(p: JsonParser): Any = {
      if (p.currentToken() != JsonToken.START_OBJECT) mismatch(p, "an object")
      val values = new Array[Any](shapes.length)
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        val i = index.get(p.currentName())
        p.nextToken()
        if (i == null) p.skipChildren() else values(i) = shapes(i).read(p)
      }
      new GenericInternalRow(values)
    }
  }
}
