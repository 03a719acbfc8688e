package io.github.sparkkinesis.payloads

import java.nio.ByteBuffer

import org.apache.avro.{LogicalTypes, Schema}
import org.apache.avro.Schema.Type._
import org.apache.avro.generic.{GenericData, GenericFixed, IndexedRecord}
import org.apache.avro.util.Utf8
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The connector's own mapping of Avro to Spark (Spark's is in spark-avro, a module clusters may lack): an Avro schema's
 * Spark type, and a converter from Avro's generic values of that schema to Spark's internal values. Every field is
 * nullable (a record that cannot be decoded gives null fields); a union of null and one type is that type; another
 * union is a struct with one field per branch, named after the branch's type, only the branch taken set.
 */
private[sparkkinesis] object AvroToSpark {

  /** The Spark type of values of `schema`; fails naming the construct when Spark has none (a recursive record). */
  def sparkType(schema: Schema): DataType = typeOf(schema, Set.empty)

  /** A converter from Avro generic values of `schema` (as a GenericDatumReader makes them) to Spark's values. */
  def converter(schema: Schema): AnyRef => Any = convert(schema)

  private def typeOf(schema: Schema, enclosing: Set[String]): DataType = (schema.getType, schema.getLogicalType) match {
    case (RECORD, _) =>
      if (enclosing(schema.getFullName))
        throw new IllegalArgumentException(
          s"Avro record ${schema.getFullName} contains itself: a recursive schema has no Spark type")
      StructType(schema.getFields.asScala.map(f =>
        StructField(f.name, typeOf(f.schema, enclosing + schema.getFullName), nullable = true)).toSeq)
    case (INT, _: LogicalTypes.Date) => DateType
    case (LONG, _: LogicalTypes.TimestampMillis | _: LogicalTypes.TimestampMicros) => TimestampType
    case (LONG, _: LogicalTypes.LocalTimestampMillis | _: LogicalTypes.LocalTimestampMicros) => TimestampNTZType
    case (BYTES | FIXED, d: LogicalTypes.Decimal) =>
      if (d.getPrecision > DecimalType.MAX_PRECISION)
        throw new IllegalArgumentException(s"Avro decimal(${d.getPrecision}, ${d.getScale}) in ${schema.getFullName} " +
          s"exceeds Spark's largest precision, ${DecimalType.MAX_PRECISION}")
      DecimalType(d.getPrecision, d.getScale)
    case (ENUM | STRING, _) => StringType
    case (BYTES | FIXED, _) => BinaryType
    case (INT, _) => IntegerType
    case (LONG, _) => LongType
    case (FLOAT, _) => FloatType
    case (DOUBLE, _) => DoubleType
    case (BOOLEAN, _) => BooleanType
    case (NULL, _) => NullType
    case (ARRAY, _) => ArrayType(typeOf(schema.getElementType, enclosing), containsNull = true)
    case (MAP, _) => MapType(StringType, typeOf(schema.getValueType, enclosing), valueContainsNull = true)
    case (UNION, _) =>
      nonNullBranches(schema) match {
        case Seq(only) => typeOf(only, enclosing)
        case branches =>
          StructType(branchNames(branches).zip(branches).map { case (name, branch) =>
            StructField(name, typeOf(branch, enclosing), nullable = true)
          })
      }
  }

  def nonNullBranches(union: Schema): Seq[Schema] = union.getTypes.asScala.filter(_.getType != NULL).toSeq

  /** A branch's field name: its type's name, or its full name (dots as _) when two named types share a name. */
  def branchNames(branches: Seq[Schema]): Seq[String] = {
    val simple = branches.map(_.getName)
    if (simple.distinct.size == simple.size) simple else branches.map(_.getFullName.replace('.', '_'))
  }

  private def convert(schema: Schema): AnyRef => Any = (schema.getType, schema.getLogicalType) match {
    case (RECORD, _) =>
      val fields = schema.getFields.asScala.map(f => convert(f.schema)).toArray
      value => {
        val record = value.asInstanceOf[IndexedRecord]
        val row = new Array[Any](fields.length)
        var i = 0
        while (i < fields.length) {
          val field = record.get(i)
          row(i) = if (field == null) null else fields(i)(field)
          i += 1
        }
        new GenericInternalRow(row): InternalRow
      }
    case (LONG, _: LogicalTypes.TimestampMillis | _: LogicalTypes.LocalTimestampMillis) =>
      value => Math.multiplyExact(value.asInstanceOf[java.lang.Long].longValue, 1000L)
    case (INT | LONG | FLOAT | DOUBLE | BOOLEAN, _) => identity
    case (BYTES | FIXED, d: LogicalTypes.Decimal) =>
      value => {
        val unscaled = new java.math.BigInteger(bytesOf(value))
        Decimal(new java.math.BigDecimal(unscaled, d.getScale), d.getPrecision, d.getScale)
      }
    case (BYTES | FIXED, _) => bytesOf
    case (STRING, _) => {
      case utf8: Utf8 => UTF8String.fromBytes(utf8.getBytes, 0, utf8.getByteLength)
      case other => UTF8String.fromString(other.toString)
    }
    case (ENUM, _) => value => UTF8String.fromString(value.toString)
    case (NULL, _) => _ => null
    case (ARRAY, _) =>
      val element = convert(schema.getElementType)
      value => {
        val items = value.asInstanceOf[java.util.Collection[AnyRef]]
        val out = new Array[Any](items.size)
        var i = 0
        val it = items.iterator()
        while (it.hasNext) {
          val item = it.next()
          out(i) = if (item == null) null else element(item)
          i += 1
        }
        new GenericArrayData(out)
      }
    case (MAP, _) =>
      val entryValue = convert(schema.getValueType)
      value => {
        val map = value.asInstanceOf[java.util.Map[AnyRef, AnyRef]]
        val keys = new Array[Any](map.size)
        val values = new Array[Any](map.size)
        var i = 0
        val it = map.entrySet.iterator()
        while (it.hasNext) {
          val entry = it.next()
          keys(i) = UTF8String.fromString(entry.getKey.toString)
          values(i) = if (entry.getValue == null) null else entryValue(entry.getValue)
          i += 1
        }
        new ArrayBasedMapData(new GenericArrayData(keys), new GenericArrayData(values))
      }
    case (UNION, _) =>
      nonNullBranches(schema) match {
        case Seq(only) => convert(only)
        case _ =>
          val branches = schema.getTypes.asScala.toSeq
          val nonNull = nonNullBranches(schema)
          // Position of each union branch among the struct's fields (null has none).
          val slot = branches.map(b => nonNull.indexWhere(_ eq b)).toArray
          val converters = branches.map(convert).toArray
          value => {
            val branch = GenericData.get().resolveUnion(schema, value)
            val row = new Array[Any](nonNull.size)
            if (slot(branch) >= 0) row(slot(branch)) = converters(branch)(value)
            new GenericInternalRow(row): InternalRow
          }
      }
  }

  private def bytesOf(value: AnyRef): Array[Byte] = value match {
    case buffer: ByteBuffer =>
      val out = new Array[Byte](buffer.remaining)
      buffer.duplicate().get(out)
      out
    case fixed: GenericFixed => fixed.bytes
  }
}
