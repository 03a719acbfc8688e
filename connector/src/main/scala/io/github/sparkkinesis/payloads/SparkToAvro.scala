package io.github.sparkkinesis.payloads

import java.nio.ByteBuffer

import org.apache.avro.{JsonProperties, LogicalTypes, Schema}
import org.apache.avro.Schema.Type._
import org.apache.avro.generic.GenericData
import org.apache.avro.util.Utf8
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The connector's own mapping of Spark to Avro, for `to_glue_schema_registry`: the Avro schema of a struct (every field
 * a union of null and its type, default null), and a converter from Spark's internal values to Avro's generic values of
 * a schema, matching record fields to struct fields by name (and union branches as [[SparkToAvroUnion]] says).
 */
private[sparkkinesis] object SparkToAvro {

  /** The Avro record schema of `struct`, named `name` (characters Avro names refuse become _). */
  def schemaOf(struct: StructType, name: String): Schema = recordOf(struct, avroName(name))

  private def avroName(name: String): String = {
    val cleaned = name.replaceAll("[^A-Za-z0-9_]", "_")
    if (cleaned.headOption.exists(_.isDigit)) "_" + cleaned else cleaned
  }

  private def recordOf(struct: StructType, name: String): Schema = {
    val fields = struct.fields.map { f =>
      val union = Schema.createUnion(Schema.create(NULL), typeOf(f.dataType, s"${name}_${f.name}"))
      new Schema.Field(f.name, union, null, JsonProperties.NULL_VALUE)
    }
    Schema.createRecord(name, null, null, false, fields.toList.asJava)
  }

  private def typeOf(dataType: DataType, name: String): Schema = dataType match {
    case StringType => Schema.create(STRING)
    case BinaryType => Schema.create(BYTES)
    case BooleanType => Schema.create(BOOLEAN)
    case ByteType | ShortType | IntegerType => Schema.create(INT)
    case LongType => Schema.create(LONG)
    case FloatType => Schema.create(FLOAT)
    case DoubleType => Schema.create(DOUBLE)
    case DateType => LogicalTypes.date().addToSchema(Schema.create(INT))
    case TimestampType => LogicalTypes.timestampMicros().addToSchema(Schema.create(LONG))
    case TimestampNTZType => LogicalTypes.localTimestampMicros().addToSchema(Schema.create(LONG))
    case d: DecimalType => LogicalTypes.decimal(d.precision, d.scale).addToSchema(Schema.create(BYTES))
    case s: StructType => recordOf(s, name)
    case a: ArrayType => Schema.createArray(Schema.createUnion(Schema.create(NULL), typeOf(a.elementType, name)))
    case MapType(StringType, value, _) => Schema.createMap(Schema.createUnion(Schema.create(NULL), typeOf(value, name)))
    case other => throw new IllegalArgumentException(
        s"to_glue_schema_registry has no Avro type for Spark's ${other.simpleString}; give option avroSchema")
  }

  /** A converter from Spark values of `dataType` to Avro values of `schema`; fails now when they do not match. */
  def converter(schema: Schema, dataType: DataType): Any => AnyRef = (schema.getType, dataType) match {
    case (UNION, _) =>
      val inner = AvroToSpark.nonNullBranches(schema) match {
        case Seq(only) => converter(only, dataType)
        case branches => SparkToAvroUnion.converter(schema, branches, dataType)
      }
      value => if (value == null) null else inner(value)
    case (RECORD, struct: StructType) =>
      val fields = schema.getFields.asScala.map { f =>
        val index = struct.fields.indexWhere(_.name == f.name)
        if (index < 0) throw new IllegalArgumentException(s"Avro field ${f.name} of ${schema.getFullName} has no " +
          s"struct field of that name among ${struct.fieldNames.mkString(", ")}")
        (index, struct(index).dataType, converter(f.schema, struct(index).dataType))
      }.toArray
      value => {
        val row = value.asInstanceOf[InternalRow]
        val record = new GenericData.Record(schema)
        var i = 0
        while (i < fields.length) {
          val (index, fieldType, convert) = fields(i)
          record.put(i, if (row.isNullAt(index)) null else convert(row.get(index, fieldType)))
          i += 1
        }
        record
      }
    case (STRING, StringType) => value => new Utf8(value.toString)
    case (ENUM, StringType) => value => new GenericData.EnumSymbol(schema, value.toString)
    case (BYTES, d: DecimalType) if schema.getLogicalType.isInstanceOf[LogicalTypes.Decimal] =>
      val scale = schema.getLogicalType.asInstanceOf[LogicalTypes.Decimal].getScale
      value => ByteBuffer.wrap(value.asInstanceOf[Decimal].toJavaBigDecimal.setScale(scale).unscaledValue.toByteArray)
    case (BYTES, BinaryType) => value => ByteBuffer.wrap(value.asInstanceOf[Array[Byte]])
    case (FIXED, BinaryType) => value => new GenericData.Fixed(schema, value.asInstanceOf[Array[Byte]])
    case (INT, ByteType) => value => Int.box(value.asInstanceOf[Byte].toInt)
    case (INT, ShortType) => value => Int.box(value.asInstanceOf[Short].toInt)
    case (INT, IntegerType | DateType) | (LONG, LongType) | (FLOAT, FloatType) | (DOUBLE, DoubleType) |
        (BOOLEAN, BooleanType) => _.asInstanceOf[AnyRef]
    case (LONG, TimestampType | TimestampNTZType) =>
      schema.getLogicalType match {
        case _: LogicalTypes.TimestampMillis | _: LogicalTypes.LocalTimestampMillis =>
          value => Long.box(Math.floorDiv(value.asInstanceOf[Long], 1000L))
        case _ => _.asInstanceOf[AnyRef]
      }
    case (ARRAY, a: ArrayType) =>
      val element = converter(schema.getElementType, a.elementType)
      value => {
        val items = value.asInstanceOf[ArrayData]
        val out = new java.util.ArrayList[AnyRef](items.numElements())
        for (i <- 0 until items.numElements())
          out.add(if (items.isNullAt(i)) null else element(items.get(i, a.elementType)))
        out
      }
    case (MAP, MapType(StringType, valueType, _)) =>
      val entry = converter(schema.getValueType, valueType)
      value => {
        val map = value.asInstanceOf[MapData]
        val out = new java.util.HashMap[Utf8, AnyRef](map.numElements() * 2)
        val (keys, values) = (map.keyArray, map.valueArray)
        for (i <- 0 until map.numElements())
          out.put(
            new Utf8(keys.getUTF8String(i).toString),
            if (values.isNullAt(i)) null else entry(values.get(i, valueType)))
        out
      }
    case (avro, spark) => throw new IllegalArgumentException(
        s"to_glue_schema_registry cannot write Spark's ${spark.simpleString} as Avro ${avro.getName.toLowerCase}" +
          s"${Option(schema.getLogicalType).fold("")(l => s" (${l.getName})")}")
  }
}
