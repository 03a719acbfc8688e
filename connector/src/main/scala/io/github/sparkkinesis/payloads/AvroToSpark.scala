package io.github.sparkkinesis.payloads

import org.apache.avro.{LogicalTypes, Schema}
import org.apache.avro.Schema.Type._
import org.apache.avro.io.{Decoder, ResolvingDecoder}
import org.apache.avro.util.Utf8
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * The connector's own mapping of Avro to Spark (Spark's is in spark-avro, a module clusters may lack): an Avro schema's
 * Spark type, and a reader of Avro binary of that schema into Spark's internal values. Every field is nullable (a
 * record that cannot be decoded gives null fields); a union of null and one type is that type; another union is a
 * struct with one field per branch, named after the branch's type, only the branch taken set.
 */
private[sparkkinesis] object AvroToSpark {

  /** The Spark type of values of `schema`; fails naming the construct when Spark has none (a recursive record). */
  def sparkType(schema: Schema): DataType = typeOf(schema, Set.empty)

  /**
   * A reader of one value of `schema` from Avro binary straight into Spark's value (no Avro generic objects between):
   * from the binary decoder when the data was written with `schema` itself, else from a [[ResolvingDecoder]] of the
   * writer's schema and `schema`, which applies Avro's resolution rules. One reader serves one thread (it keeps scratch
   * buffers).
   */
  def reader(schema: Schema): Decoder => Any = readerOf(schema)

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

  private def readerOf(schema: Schema): Decoder => Any = (schema.getType, schema.getLogicalType) match {
    case (RECORD, _) => new RecordReader(schema)
    case (LONG, _: LogicalTypes.TimestampMillis | _: LogicalTypes.LocalTimestampMillis) =>
      in => Math.multiplyExact(in.readLong(), 1000L)
    case (INT, _) => _.readInt()
    case (LONG, _) => _.readLong()
    case (FLOAT, _) => _.readFloat()
    case (DOUBLE, _) => _.readDouble()
    case (BOOLEAN, _) => _.readBoolean()
    case (BYTES, d: LogicalTypes.Decimal) => in => decimal(bytes(in), d)
    case (FIXED, d: LogicalTypes.Decimal) => in => decimal(fixed(in, schema.getFixedSize), d)
    case (BYTES, _) => bytes
    case (FIXED, _) => in => fixed(in, schema.getFixedSize)
    case (STRING, _) =>
      val scratch = new Utf8()
      in => string(in.readString(scratch))
    case (ENUM, _) =>
      // Made once: UTF8Strings are never changed in place, so every row may hold the same symbol.
      val symbols = schema.getEnumSymbols.asScala.map(UTF8String.fromString).toArray
      in => symbols(in.readEnum())
    case (NULL, _) =>
      in => {
        in.readNull()
        null
      }
    case (ARRAY, _) => new ArrayReader(readerOf(schema.getElementType))
    case (MAP, _) => new MapReader(readerOf(schema.getValueType))
    case (UNION, _) =>
      val branches = schema.getTypes.asScala.toSeq
      // The null branch has no reader: its value is null, for the union as a whole.
      val readers = branches.map(b => if (b.getType == NULL) null else readerOf(b)).toArray
      nonNullBranches(schema) match {
        case Seq(_) =>
          in => {
            val branch = readers(in.readIndex())
            if (branch == null) { in.readNull(); null }
            else branch(in)
          }
        case nonNull =>
          // Position of each union branch among the struct's fields (null has none).
          val slot = branches.map(b => nonNull.indexWhere(_ eq b)).toArray
          in => {
            val branch = in.readIndex()
            if (readers(branch) == null) { in.readNull(); null }
            else {
              val row = new Array[Any](nonNull.size)
              row(slot(branch)) = readers(branch)(in)
              new GenericInternalRow(row): InternalRow
            }
          }
      }
  }

  /**
   * A record's fields in the order the data has them: a resolving decoder says it (a writer's field order may differ,
   * and fields only the reader has come last, read from their defaults); the binary decoder of the reader's own schema
   * has them in the reader's order.
   */
  private final class RecordReader(schema: Schema) extends (Decoder => Any) {
    private val fields = schema.getFields.asScala.map(f => readerOf(f.schema)).toArray

    def apply(in: Decoder): Any = {
      val row = new Array[Any](fields.length)
      val order = in match {
        case resolving: ResolvingDecoder => resolving.readFieldOrderIfDiff()
        case _ => null
      }
      var i = 0
      if (order == null) while (i < fields.length) {
        row(i) = fields(i)(in)
        i += 1
      }
      else while (i < order.length) {
        val at = order(i).pos
        row(at) = fields(at)(in)
        i += 1
      }
      new GenericInternalRow(row): InternalRow
    }
  }

  private final class ArrayReader(element: Decoder => Any) extends (Decoder => Any) {
    def apply(in: Decoder): Any = {
      var block = in.readArrayStart()
      val items = new Items(block)
      while (block > 0) {
        var i = 0L
        while (i < block) {
          items.add(element(in))
          i += 1
        }
        block = in.arrayNext()
      }
      new GenericArrayData(items.all)
    }
  }

  /** Entries in the data's order; a key written twice keeps its last value, as Avro's own reader keeps it. */
  private final class MapReader(value: Decoder => Any) extends (Decoder => Any) {
    private val scratch = new Utf8()

    def apply(in: Decoder): Any = {
      val entries = new java.util.LinkedHashMap[UTF8String, Any]()
      var block = in.readMapStart()
      while (block > 0) {
        var i = 0L
        while (i < block) {
          val key = string(in.readString(scratch))
          entries.put(key, value(in))
          i += 1
        }
        block = in.mapNext()
      }
      val keys = new Array[Any](entries.size)
      val values = new Array[Any](entries.size)
      var i = 0
      val it = entries.entrySet.iterator()
      while (it.hasNext) {
        val entry = it.next()
        keys(i) = entry.getKey
        values(i) = entry.getValue
        i += 1
      }
      new ArrayBasedMapData(new GenericArrayData(keys), new GenericArrayData(values))
    }
  }

  /**
   * An array's items, gathered block by block; the first allocation is bounded (`firstBlock`: the first block's count),
   * so that a corrupt count fails at the data's end rather than by allocating for it.
   */
  private final class Items(firstBlock: Long) {
    private var items = new Array[AnyRef](math.max(0L, math.min(firstBlock, 1024L)).toInt)
    private var size = 0

    def add(item: Any): Unit = {
      if (size == items.length) items = java.util.Arrays.copyOf(items, size * 2 + 8)
      items(size) = item.asInstanceOf[AnyRef]
      size += 1
    }

    def all: Array[Any] =
      (if (size == items.length) items else java.util.Arrays.copyOf(items, size)).asInstanceOf[Array[Any]]
  }

  /** A copy of the string's bytes: `utf8` is a scratch buffer the next string overwrites. */
  private def string(utf8: Utf8): UTF8String =
    UTF8String.fromBytes(java.util.Arrays.copyOf(utf8.getBytes, utf8.getByteLength))

  private def bytes(in: Decoder): Array[Byte] = {
    val buffer = in.readBytes(null)
    if (buffer.hasArray && buffer.arrayOffset == 0 && buffer.position == 0 && buffer.limit == buffer.array.length)
      buffer.array
    else {
      val out = new Array[Byte](buffer.remaining)
      buffer.duplicate().get(out)
      out
    }
  }

  private def fixed(in: Decoder, size: Int): Array[Byte] = {
    val out = new Array[Byte](size)
    in.readFixed(out, 0, size)
    out
  }

  private def decimal(unscaled: Array[Byte], d: LogicalTypes.Decimal): Decimal =
    Decimal(new java.math.BigDecimal(new java.math.BigInteger(unscaled), d.getScale), d.getPrecision, d.getScale)
}
