package io.github.sparkkinesis.payloads

import scala.util.Try

import com.google.protobuf.{ByteString, DynamicMessage, Message}
import com.google.protobuf.Descriptors.{Descriptor, FieldDescriptor}
import com.google.protobuf.Descriptors.FieldDescriptor.Type
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The connector's mapping of Spark rows to protobuf messages, for `to_glue_schema_registry`: the inverse of
 * [[ProtobufToSpark]], struct fields matched to the message's fields by name. Each field takes the Spark type
 * `from_glue_schema_registry` reads it as, or a narrower one that fits (byte, short or int into an integral field,
 * float into double); enums take their value's name (or, for an open enum, the digits of a number it lacks). A null, or
 * a message field the struct lacks, is an absent field: null again where the field has presence (unless proto2 gives it
 * a default), its default (0, "") where it has none, as protobuf defines. What cannot be written as given (a value out
 * of an unsigned field's range, an enum name the enum lacks, a null in a repeated field or a map's value, two members
 * of one oneof, a null required field) fails the row, naming the field: nothing is dropped or changed silently.
 */
private[sparkkinesis] object SparkToProtobuf {

  /** A converter from rows of `struct` to messages of `message`; fails now, naming the field, when they do not fit. */
  def converter(message: Descriptor, struct: StructType): InternalRow => Message = messageOf(message, struct, "")

  private def messageOf(message: Descriptor, struct: StructType, path: String): InternalRow => DynamicMessage = {
    struct.fields.find(f => message.findFieldByName(f.name) == null).foreach { f =>
      refuse(s"struct field ${at(path, f.name)} (${f.dataType.simpleString}) is not a field of protobuf message " +
        s"${message.getFullName}, whose fields are ${message.getFields.asScala.map(_.getName).mkString(", ")}")
    }
    message.getFields.asScala.find(f => f.isRequired && !struct.fieldNames.contains(f.getName)).foreach { f =>
      refuse(s"protobuf field ${at(path, f.getName)} (${protoType(f)}) of ${message.getFullName} is required, and " +
        s"the struct has no field of that name")
    }
    val fields = struct.fields.map(f => message.findFieldByName(f.name))
    val setters = fields.zip(struct.fields).map { case (field, f) => setter(field, f.dataType, at(path, f.name)) }
    val types = struct.fields.map(_.dataType)
    // Per struct field, the oneof it belongs to (null: none), to refuse a row that sets two members of one.
    val oneofs = fields.map(f => Option(f.getRealContainingOneof).orNull)
    row => {
      val builder = DynamicMessage.newBuilder(message)
      var i = 0
      while (i < setters.length) {
        if (!row.isNullAt(i)) {
          val oneof = oneofs(i)
          if (oneof != null && builder.hasOneof(oneof))
            fail(
              at(path, fields(i).getName),
              s"it and ${builder.getOneofFieldDescriptor(oneof).getName} are both " +
                s"set, and they are members of oneof ${oneof.getName}, which holds one: set at most one of them")
          setters(i)(builder, row.get(i, types(i)))
        } else if (fields(i).isRequired) fail(at(path, fields(i).getName), "it is null, and the field is required")
        i += 1
      }
      builder.build()
    }
  }

  /** How a non-null value of `dataType` is set into `field` of a message being built. */
  private def setter(field: FieldDescriptor, dataType: DataType, path: String): (DynamicMessage.Builder, Any) => Unit =
    (field, dataType) match {
      case (_, MapType(keyType, valueType, _)) if field.isMapField =>
        val entryType = field.getMessageType
        val (keyField, valueField) = (entryType.findFieldByNumber(1), entryType.findFieldByNumber(2))
        val key = valueOf(keyField, keyType, s"$path (key)")
        val value = valueOf(valueField, valueType, s"$path (value)")
        (builder, v) => {
          val map = v.asInstanceOf[MapData]
          val (keys, values) = (map.keyArray(), map.valueArray())
          var i = 0
          while (i < map.numElements()) {
            val entry = DynamicMessage.newBuilder(entryType).setField(keyField, key(keys.get(i, keyType)))
            // An absent value reads back as its type's default (an empty message too), not as null.
            if (values.isNullAt(i))
              fail(path, s"the value of key ${keys.get(i, keyType)} is null, and a protobuf map cannot hold null")
            entry.setField(valueField, value(values.get(i, valueType)))
            builder.addRepeatedField(field, entry.build())
            i += 1
          }
        }
      case (_, ArrayType(elementType, _)) if field.isRepeated && !field.isMapField =>
        val element = valueOf(field, elementType, path)
        (builder, v) => {
          val items = v.asInstanceOf[ArrayData]
          var i = 0
          while (i < items.numElements()) {
            if (items.isNullAt(i)) fail(path, s"element $i is null, and a repeated protobuf field cannot hold null")
            builder.addRepeatedField(field, element(items.get(i, elementType)))
            i += 1
          }
        }
      case _ if field.isRepeated => mismatch(field, dataType, path)
      case _ =>
        val value = valueOf(field, dataType, path)
        (builder, v) => builder.setField(field, value(v))
    }

  /** A converter of one non-null Spark value of `dataType` to protobuf-java's value of `field`'s (element) type. */
  private def valueOf(field: FieldDescriptor, dataType: DataType, path: String): Any => AnyRef = {
    lazy val integral = integralOf(dataType)
    field.getType match {
      case Type.INT32 | Type.SINT32 | Type.SFIXED32 if integral.isDefined && dataType != LongType =>
        v => Int.box(integral.get(v).toInt)
      case Type.INT64 | Type.SINT64 | Type.SFIXED64 if integral.isDefined =>
        v => Long.box(integral.get(v))
      case Type.UINT32 | Type.FIXED32 if integral.isDefined =>
        v => {
          val n = integral.get(v)
          if (n < 0 || n > 0xffffffffL) fail(
            path,
            s"$n is out of the range of protobuf ${protoType(field)} " +
              "(0 to 4294967295)")
          Int.box(n.toInt)
        }
      case Type.UINT64 | Type.FIXED64 if integral.isDefined =>
        v => {
          val n = integral.get(v)
          if (n < 0) fail(path, s"$n is negative, and protobuf ${protoType(field)} is unsigned")
          Long.box(n)
        }
      case Type.UINT64 | Type.FIXED64 if dataType.isInstanceOf[DecimalType] =>
        v => {
          val exact = v.asInstanceOf[Decimal].toJavaBigDecimal
          val whole = Try(exact.toBigIntegerExact).toOption.filter(n => n.signum >= 0 && n.bitLength <= 64)
          Long.box(whole.getOrElse(fail(
            path,
            s"$exact is not a whole number from 0 to 18446744073709551615, as " +
              s"protobuf ${protoType(field)} holds")).longValue)
        }
      case Type.FLOAT if dataType == FloatType => _.asInstanceOf[AnyRef]
      case Type.DOUBLE if dataType == DoubleType => _.asInstanceOf[AnyRef]
      case Type.DOUBLE if dataType == FloatType => v => Double.box(v.asInstanceOf[Float].toDouble)
      case Type.BOOL if dataType == BooleanType => _.asInstanceOf[AnyRef]
      case Type.STRING if dataType == StringType => _.toString
      case Type.BYTES if dataType == BinaryType => v => ByteString.copyFrom(v.asInstanceOf[Array[Byte]])
      case Type.ENUM if dataType == StringType => enumOf(field, path)
      case Type.MESSAGE => messageValueOf(field, dataType, path)
      case _ => mismatch(field, dataType, path)
    }
  }

  /** Spark's integral types as a long; None for the others. */
  private def integralOf(dataType: DataType): Option[Any => Long] = dataType match {
    case ByteType => Some(_.asInstanceOf[Byte].toLong)
    case ShortType => Some(_.asInstanceOf[Short].toLong)
    case IntegerType => Some(_.asInstanceOf[Int].toLong)
    case LongType => Some(_.asInstanceOf[Long])
    case _ => None
  }

  private def enumOf(field: FieldDescriptor, path: String): Any => AnyRef = {
    val enumeration = field.getEnumType
    v => {
      val name = v.toString
      Option(enumeration.findValueByName(name)).getOrElse {
        // What the reader gives for a number an open enum lacks: its digits, written back as that number.
        val number = if (enumeration.isClosed) None else Try(Integer.parseInt(name)).toOption
        number.map(enumeration.findValueByNumberCreatingIfUnknown).getOrElse(fail(
          path,
          s"'$name' is not a value of enum ${enumeration.getFullName}, whose values are " +
            enumeration.getValues.asScala.map(_.getName).mkString(", ")))
      }
    }
  }

  private def messageValueOf(field: FieldDescriptor, dataType: DataType, path: String): Any => AnyRef = {
    val message = field.getMessageType
    (message.getFullName, dataType) match {
      case ("google.protobuf.Timestamp", TimestampType) =>
        // Timestamp's nanos are never negative: seconds round down.
        time(message, micros => (Math.floorDiv(micros, 1000000L), Math.floorMod(micros, 1000000L)))
      case ("google.protobuf.Duration", _: DayTimeIntervalType) =>
        // Duration's seconds and nanos share the sign: both round toward zero.
        time(message, micros => (micros / 1000000L, micros % 1000000L))
      case (name, _) if ProtobufToSpark.isWrapper(name) =>
        val valueField = message.findFieldByNumber(1)
        val inner = valueOf(valueField, dataType, path)
        v => DynamicMessage.newBuilder(message).setField(valueField, inner(v)).build()
      case (_, struct: StructType) =>
        val convert = messageOf(message, struct, path)
        v => convert(v.asInstanceOf[InternalRow])
      case _ => mismatch(field, dataType, path)
    }
  }

  /** A Timestamp or Duration from Spark's microseconds, split into seconds and microseconds by `split`. */
  private def time(message: Descriptor, split: Long => (Long, Long)): Any => AnyRef = {
    val (seconds, nanos) = (message.findFieldByNumber(1), message.findFieldByNumber(2))
    v => {
      val (s, micros) = split(v.asInstanceOf[Long])
      DynamicMessage.newBuilder(message).setField(seconds, Long.box(s)).setField(nanos, Int.box(micros.toInt * 1000))
        .build()
    }
  }

  /** The field's protobuf type as a .proto file writes it. */
  private def protoType(field: FieldDescriptor): String =
    if (field.isMapField) {
      val entry = field.getMessageType
      s"map<${protoType(entry.findFieldByNumber(1))}, ${protoType(entry.findFieldByNumber(2))}>"
    } else {
      val element = field.getType match {
        case Type.MESSAGE => field.getMessageType.getFullName
        case Type.ENUM => s"enum ${field.getEnumType.getFullName}"
        case other => other.name.toLowerCase(java.util.Locale.ROOT)
      }
      if (field.isRepeated) s"repeated $element" else element
    }

  private def mismatch(field: FieldDescriptor, dataType: DataType, path: String): Nothing = {
    // The Spark type from_glue_schema_registry reads the field as: what to write it from.
    val expected = Try(ProtobufToSpark.sparkType(field.getContainingType)(field.getName).dataType.simpleString)
      .fold(_ => "", t => s" (it reads back as $t)")
    refuse(s"struct field $path is ${dataType.simpleString}, and protobuf field ${field.getName} of " +
      s"${field.getContainingType.getFullName} is ${protoType(field)}$expected: it cannot be written from " +
      dataType.simpleString)
  }

  private def at(path: String, name: String): String = if (path.isEmpty) name else s"$path.$name"

  private def refuse(reason: String): Nothing = throw new IllegalArgumentException(reason)

  private def fail(path: String, reason: String): Nothing =
    throw new IllegalArgumentException(s"to_glue_schema_registry cannot write field $path as protobuf: $reason")
}
