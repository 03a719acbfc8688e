package io.github.sparkkinesis.payloads

import java.util.Base64

import scala.collection.mutable.ArrayBuffer

import com.fasterxml.jackson.core.{JsonParser, JsonToken}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * Reads one DynamoDB attribute value in DynamoDB JSON (`{"S": "text"}`, `{"N": "12.5"}`, `{"M": {...}}`, ...) as a
 * value of the Spark type the item schema gives the attribute at `path`. Built once per schema, so that decoding a
 * record walks a tree of readers without looking at the schema again. `{"NULL": true}` is null whatever the type; any
 * other DynamoDB type the Spark type cannot hold exactly is a [[PayloadError]] naming the attribute.
 */
private[payloads] abstract class AttributeReader(val path: String, val dataType: DataType) extends Serializable {

  /** The value of a scalar (S, N or B) or set member with type tag `tag` and text `text`. */
  def scalar(tag: String, text: String): Any = mismatch(tag)

  /** The value tagged `tag`, `p` on its first token; scalars go to [[scalar]], other tags are readers' own. */
  protected def tagged(tag: String, p: JsonParser): Any =
    if (p.currentToken() == JsonToken.VALUE_STRING && AttributeReader.Scalars(tag)) scalar(tag, p.getText)
    else mismatch(tag)

  /** The attribute value `p` is on (its START_OBJECT); leaves `p` on its END_OBJECT. */
  final def read(p: JsonParser): Any = {
    if (p.currentToken() != JsonToken.START_OBJECT || p.nextToken() != JsonToken.FIELD_NAME)
      PayloadError(
        s"""attribute $path is not a DynamoDB attribute value (an object with one type, such as {"S": ...})""")
    val tag = p.currentName()
    p.nextToken()
    val value =
      if (tag == "NULL") {
        if (p.currentToken() != JsonToken.VALUE_TRUE) PayloadError(s"attribute $path has NULL ${p.getText}, not true")
        null
      } else tagged(tag, p)
    if (p.nextToken() != JsonToken.END_OBJECT) PayloadError(s"attribute $path has more than one DynamoDB type")
    value
  }

  protected def mismatch(tag: String): Nothing =
    PayloadError(
      s"attribute $path is of DynamoDB type $tag, which the item schema's ${dataType.simpleString} cannot hold")

  protected def notFit(text: String): Nothing =
    PayloadError(s"attribute $path's number $text does not fit the item schema's ${dataType.simpleString}")
}

private[payloads] object AttributeReader {
  private val Scalars = Set("S", "N", "B")

  /** The reader of values of `dataType` at `path`; a type DynamoDB JSON cannot give is refused here, at planning. */
  def apply(path: String, dataType: DataType): AttributeReader = dataType match {
    case StringType => new StringReader(path)
    case BinaryType => new BinaryReader(path)
    case BooleanType => new BooleanReader(path)
    case ByteType | ShortType | IntegerType | LongType => new IntegralReader(path, dataType)
    case FloatType | DoubleType => new FloatingReader(path, dataType)
    case d: DecimalType => new DecimalReader(path, d)
    case a: ArrayType => new ListReader(path, a)
    case m: MapType if m.keyType == StringType => new MapReader(path, m)
    case s: StructType => new StructReader(path, s)
    case other =>
      throw new IllegalArgumentException(
        s"dynamodb_change: the item schema gives $path the type ${other.simpleString}, which DynamoDB JSON cannot " +
          "give; use " +
          "string, binary, boolean, tinyint/smallint/int/bigint, float/double, decimal, array (L, SS, NS, BS), " +
          "map<string, ...> or struct (M), and convert the column afterwards")
  }

  /** `dataType` with every field, element and value nullable: any attribute may be missing from an image. */
  def nullable(dataType: DataType): DataType = dataType match {
    case s: StructType => StructType(s.fields.map(f => f.copy(dataType = nullable(f.dataType), nullable = true)))
    case a: ArrayType => ArrayType(nullable(a.elementType), containsNull = true)
    case m: MapType => MapType(m.keyType, nullable(m.valueType), valueContainsNull = true)
    case other => other
  }

  private final class StringReader(path: String) extends AttributeReader(path, StringType) {
    override def scalar(tag: String, text: String): Any =
      if (tag == "S") UTF8String.fromString(text) else mismatch(tag)
  }

  private final class BinaryReader(path: String) extends AttributeReader(path, BinaryType) {
    override def scalar(tag: String, text: String): Any =
      if (tag != "B") mismatch(tag)
      else
        try Base64.getDecoder.decode(text)
        catch {
          case e: IllegalArgumentException => PayloadError(s"attribute $path's B is not base64: ${e.getMessage}")
        }
  }

  private final class BooleanReader(path: String) extends AttributeReader(path, BooleanType) {
    override protected def tagged(tag: String, p: JsonParser): Any = p.currentToken() match {
      case JsonToken.VALUE_TRUE if tag == "BOOL" => true
      case JsonToken.VALUE_FALSE if tag == "BOOL" => false
      case _ => mismatch(tag)
    }
  }

  private final class IntegralReader(path: String, dataType: DataType) extends AttributeReader(path, dataType) {
    private val (min, max) = dataType match {
      case ByteType => (Byte.MinValue.toLong, Byte.MaxValue.toLong)
      case ShortType => (Short.MinValue.toLong, Short.MaxValue.toLong)
      case IntegerType => (Int.MinValue.toLong, Int.MaxValue.toLong)
      case _ => (Long.MinValue, Long.MaxValue)
    }

    override def scalar(tag: String, text: String): Any = {
      if (tag != "N") mismatch(tag)
      val value =
        try java.lang.Long.parseLong(text)
        catch {
          // DynamoDB may write a whole number with an exponent or trailing zeros ("1E+2", "100.0").
          case _: NumberFormatException =>
            try new java.math.BigDecimal(text).longValueExact()
            catch { case _: ArithmeticException | _: NumberFormatException => notFit(text) }
        }
      if (value < min || value > max) notFit(text)
      dataType match {
        case ByteType => value.toByte
        case ShortType => value.toShort
        case IntegerType => value.toInt
        case _ => value
      }
    }
  }

  private final class FloatingReader(path: String, dataType: DataType) extends AttributeReader(path, dataType) {
    override def scalar(tag: String, text: String): Any = {
      if (tag != "N") mismatch(tag)
      val value =
        try java.lang.Double.parseDouble(text)
        catch { case _: NumberFormatException => notFit(text) }
      if (dataType == FloatType) {
        val single = value.toFloat
        if (single.isInfinite) notFit(text) else single
      } else if (value.isInfinite) notFit(text)
      else value
    }
  }

  private final class DecimalReader(path: String, dataType: DecimalType) extends AttributeReader(path, dataType) {
    override def scalar(tag: String, text: String): Any = {
      if (tag != "N") mismatch(tag)
      val exact =
        try new java.math.BigDecimal(text)
        catch { case _: NumberFormatException => notFit(text) }
      // Strict: a value with more fractional digits than the scale would be rounded, one with more integral digits
      // than precision minus scale would not fit.
      if (exact.stripTrailingZeros().scale() > dataType.scale) notFit(text)
      val value = Decimal(exact)
      if (!value.changePrecision(dataType.precision, dataType.scale)) notFit(text)
      value
    }
  }

  /** L (elements are attribute values) and the sets SS, NS and BS (elements are the scalars' texts). */
  private final class ListReader(path: String, dataType: ArrayType) extends AttributeReader(path, dataType) {
    private val element = AttributeReader(s"$path[]", dataType.elementType)

    override protected def tagged(tag: String, p: JsonParser): Any = {
      if (p.currentToken() != JsonToken.START_ARRAY) mismatch(tag)
      val values = ArrayBuffer.empty[Any]
      tag match {
        case "L" => while (p.nextToken() != JsonToken.END_ARRAY) values += element.read(p)
        case "SS" | "NS" | "BS" =>
          val memberTag = tag.substring(0, 1)
          while (p.nextToken() != JsonToken.END_ARRAY) {
            if (p.currentToken() != JsonToken.VALUE_STRING) PayloadError(s"attribute $path's $tag has a non-string")
            values += element.scalar(memberTag, p.getText)
          }
        case _ => mismatch(tag)
      }
      new GenericArrayData(values.toArray)
    }
  }

  private final class MapReader(path: String, dataType: MapType) extends AttributeReader(path, dataType) {
    private val value = AttributeReader(s"$path{}", dataType.valueType)

    override protected def tagged(tag: String, p: JsonParser): Any = {
      if (tag != "M") mismatch(tag)
      val keys = ArrayBuffer.empty[Any]
      val values = ArrayBuffer.empty[Any]
      JsonReading.fields(p, s"attribute $path's M") { name =>
        keys += UTF8String.fromString(name)
        values += value.read(p)
      }
      new ArrayBasedMapData(new GenericArrayData(keys.toArray), new GenericArrayData(values.toArray))
    }
  }

  /**
   * M into a struct: the attributes the struct names, by name; others are skipped, missing ones are null. Its fields'
   * paths start with `path` (an image's name; empty for the item schema itself).
   */
  final class StructReader(path: String, dataType: StructType) extends AttributeReader(path, dataType) {
    private val readers =
      dataType.fields.map(f => AttributeReader(if (path.isEmpty) f.name else s"$path.${f.name}", f.dataType))
    private val index = dataType.fieldNames.zipWithIndex.toMap

    override protected def tagged(tag: String, p: JsonParser): Any =
      if (tag == "M") item(p, s"attribute $path's M") else mismatch(tag)

    /**
     * The object of attributes `p` is on (an image, or an M's value; `what` in messages) as a row; JSON null is null.
     */
    def item(p: JsonParser, what: String): InternalRow =
      if (p.currentToken() == JsonToken.VALUE_NULL) null
      else {
        val row = new GenericInternalRow(readers.length)
        JsonReading.fields(p, what) { name =>
          index.get(name) match {
            case Some(i) => row.update(i, readers(i).read(p))
            case None => JsonReading.skip(p)
          }
        }
        row
      }
  }
}
