package io.github.sparkkinesis.payloads

import com.google.protobuf.{ByteString, Message}
import com.google.protobuf.Descriptors.{Descriptor, EnumValueDescriptor, FieldDescriptor}
import com.google.protobuf.Descriptors.FieldDescriptor.{JavaType, Type}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The connector's mapping of protobuf messages to Spark: a message's Spark type, and a converter from its parsed
 * messages to Spark rows. Fields keep their names, every one nullable: a field with presence (message fields, proto2
 * and proto3 `optional`, oneof members) that is absent is null, unless proto2 gave it a default; one without presence
 * reads its default, as protobuf does. int32/sint32/sfixed32 are int; uint32/fixed32 long; int64/sint64/sfixed64 long;
 * uint64/fixed64 decimal(20,0) (exact); enums their value's name (an unknown number, as open enums keep it, its
 * digits); bytes binary; repeated an array; map a map; google.protobuf.Timestamp a timestamp, Duration a day-time
 * interval, the wrappers (Int32Value, StringValue, ...) their value. A message that contains itself has no Spark type.
 */
private[sparkkinesis] object ProtobufToSpark {

  /** The Spark type of `message`; fails naming the message when it contains itself. */
  def sparkType(message: Descriptor): StructType = struct(message, Set.empty)

  /** A converter from parsed messages of `message` to Spark rows of [[sparkType]]. */
  def converter(message: Descriptor): Message => InternalRow = {
    sparkType(message) // refuses recursive messages before the converters below would recurse forever
    row(message)
  }

  private val Wrappers = Set("Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes")
    .map(w => s"google.protobuf.${w}Value")

  /** Whether the message named `fullName` is one of protobuf's wrappers, read as the value it wraps. */
  def isWrapper(fullName: String): Boolean = Wrappers(fullName)

  private def struct(message: Descriptor, enclosing: Set[String]): StructType = {
    if (enclosing(message.getFullName))
      throw new IllegalArgumentException(
        s"protobuf message ${message.getFullName} contains itself: a recursive message has no Spark type")
    val inside = enclosing + message.getFullName
    StructType(message.getFields.asScala.map(f => StructField(f.getName, fieldType(f, inside), nullable = true)).toSeq)
  }

  private def fieldType(field: FieldDescriptor, enclosing: Set[String]): DataType =
    if (field.isMapField) {
      val entry = field.getMessageType
      MapType(
        valueType(entry.findFieldByNumber(1), enclosing),
        valueType(entry.findFieldByNumber(2), enclosing),
        valueContainsNull = true)
    } else if (field.isRepeated) ArrayType(valueType(field, enclosing), containsNull = false)
    else valueType(field, enclosing)

  private def unsigned(field: FieldDescriptor): Boolean = field.getType match {
    case Type.UINT32 | Type.FIXED32 | Type.UINT64 | Type.FIXED64 => true
    case _ => false
  }

  private def valueType(field: FieldDescriptor, enclosing: Set[String]): DataType = field.getJavaType match {
    case JavaType.INT => if (unsigned(field)) LongType else IntegerType
    case JavaType.LONG => if (unsigned(field)) DecimalType(20, 0) else LongType
    case JavaType.FLOAT => FloatType
    case JavaType.DOUBLE => DoubleType
    case JavaType.BOOLEAN => BooleanType
    case JavaType.STRING | JavaType.ENUM => StringType
    case JavaType.BYTE_STRING => BinaryType
    case JavaType.MESSAGE =>
      val message = field.getMessageType
      message.getFullName match {
        case "google.protobuf.Timestamp" => TimestampType
        case "google.protobuf.Duration" => DayTimeIntervalType()
        case wrapper if Wrappers(wrapper) => valueType(message.findFieldByNumber(1), enclosing)
        case _ => struct(message, enclosing)
      }
  }

  private def row(message: Descriptor): Message => InternalRow = {
    val fields = message.getFields.asScala.toArray
    val converters = fields.map(fieldConverter)
    val nullWhenAbsent = fields.map(f => !f.isRepeated && f.hasPresence && !f.hasDefaultValue)
    value => {
      val out = new Array[Any](fields.length)
      var i = 0
      while (i < fields.length) {
        val field = fields(i)
        if (!(nullWhenAbsent(i) && !value.hasField(field))) out(i) = converters(i)(value.getField(field))
        i += 1
      }
      new GenericInternalRow(out)
    }
  }

  private def fieldConverter(field: FieldDescriptor): AnyRef => Any =
    if (field.isMapField) {
      val entry = field.getMessageType
      val (keyField, valueField) = (entry.findFieldByNumber(1), entry.findFieldByNumber(2))
      val (key, value) = (valueConverter(keyField), valueConverter(valueField))
      val valueMayBeAbsent = valueField.getJavaType == JavaType.MESSAGE
      list => {
        // The wire may repeat a key: the last entry wins, as in protobuf's own maps.
        val entries = new java.util.LinkedHashMap[Any, Any]()
        val it = list.asInstanceOf[java.util.List[Message]].iterator()
        while (it.hasNext) {
          val e = it.next()
          entries.put(
            key(e.getField(keyField)),
            if (valueMayBeAbsent && !e.hasField(valueField)) null else value(e.getField(valueField)))
        }
        new ArrayBasedMapData(
          new GenericArrayData(entries.keySet.toArray),
          new GenericArrayData(entries.values.toArray))
      }
    } else if (field.isRepeated) {
      val element = valueConverter(field)
      list => {
        val items = list.asInstanceOf[java.util.List[AnyRef]]
        val out = new Array[Any](items.size)
        var i = 0
        while (i < out.length) { out(i) = element(items.get(i)); i += 1 }
        new GenericArrayData(out)
      }
    } else valueConverter(field)

  private def valueConverter(field: FieldDescriptor): AnyRef => Any = field.getType match {
    case Type.UINT32 | Type.FIXED32 => v => Integer.toUnsignedLong(v.asInstanceOf[Integer])
    case Type.UINT64 | Type.FIXED64 =>
      v => {
        val bits = v.asInstanceOf[java.lang.Long].longValue
        if (bits >= 0) Decimal(bits, 20, 0)
        else Decimal(new java.math.BigDecimal(new java.math.BigInteger(java.lang.Long.toUnsignedString(bits))), 20, 0)
      }
    case Type.STRING => v => UTF8String.fromString(v.asInstanceOf[String])
    case Type.BYTES => v => v.asInstanceOf[ByteString].toByteArray
    case Type.ENUM =>
      v => {
        val e = v.asInstanceOf[EnumValueDescriptor]
        // A number the reader's enum lacks (kept by open enums) has no name: its digits instead.
        UTF8String.fromString(if (e.getIndex < 0) e.getNumber.toString else e.getName)
      }
    case Type.MESSAGE => messageConverter(field.getMessageType)
    case _ => identity // int32, int64, float, double, bool and their variants: Spark's own boxed values
  }

  private def messageConverter(message: Descriptor): AnyRef => Any = message.getFullName match {
    case "google.protobuf.Timestamp" | "google.protobuf.Duration" =>
      val (seconds, nanos) = (message.findFieldByNumber(1), message.findFieldByNumber(2))
      v => {
        val m = v.asInstanceOf[Message]
        Math.addExact(
          Math.multiplyExact(m.getField(seconds).asInstanceOf[java.lang.Long].longValue, 1000000L),
          Math.floorDiv(m.getField(nanos).asInstanceOf[Integer].intValue, 1000).toLong)
      }
    case wrapper if Wrappers(wrapper) =>
      val field = message.findFieldByNumber(1)
      val inner = valueConverter(field)
      v => inner(v.asInstanceOf[Message].getField(field))
    case _ =>
      val convert = row(message)
      v => convert(v.asInstanceOf[Message])
  }
}
