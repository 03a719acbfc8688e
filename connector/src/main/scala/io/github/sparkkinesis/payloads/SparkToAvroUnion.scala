package io.github.sparkkinesis.payloads

import org.apache.avro.Schema
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * Writing Spark values as an Avro union of two or more non-null types, by one of two rules checked in this order:
 *   - a struct whose every field names a branch, as readers map such a union: the branch's type name (as
 *     `from_glue_schema_registry` names it) or `member0`, `member1`, ... (as Spark's `from_avro` does, null not
 *     counted): each value is written as the branch of its one non-null field; a value with none is null, one with two
 *     or more is refused;
 *   - any other value, when exactly one branch can hold its Spark type (a string into `["null", "string", "long"]`).
 * Anything else is refused when the query is planned, naming the branches.
 */
private[payloads] object SparkToAvroUnion {

  private val Member = "member(\\d+)".r

  def converter(union: Schema, branches: Seq[Schema], dataType: DataType): Any => AnyRef = dataType match {
    case struct: StructType if struct.nonEmpty && struct.fieldNames.forall(branchOf(branches, _).isDefined) =>
      ofBranchStruct(union, branches, struct)
    case _ =>
      branches.filter(b => canHold(b, dataType)) match {
        case Seq(only) => SparkToAvro.converter(only, dataType)
        case none if none.isEmpty =>
          throw new IllegalArgumentException(s"to_glue_schema_registry: no branch of the Avro union $union can hold " +
            s"Spark's ${dataType.simpleString}; ${asBranchStruct(branches)}")
        case several =>
          throw new IllegalArgumentException(s"to_glue_schema_registry: branches ${several.map(_.getName)
              .mkString(" and ")} of the Avro union $union can each hold Spark's ${dataType.simpleString}, so " +
            s"which to write is ambiguous; ${asBranchStruct(branches)}")
      }
  }

  private def asBranchStruct(branches: Seq[Schema]): String =
    s"write a struct with one field per branch (${AvroToSpark.branchNames(branches).mkString(", ")}, or member0 to " +
      s"member${branches.size - 1}), the branch to write its one non-null field"

  /** The index of the branch a struct field names, by type name or as `member<i>`. */
  private def branchOf(branches: Seq[Schema], field: String): Option[Int] =
    AvroToSpark.branchNames(branches).indexOf(field) match {
      case -1 =>
        field match {
          case Member(i) if i.length < 4 && i.toInt < branches.size => Some(i.toInt)
          case _ => None
        }
      case i => Some(i)
    }

  private def canHold(branch: Schema, dataType: DataType): Boolean =
    try {
      SparkToAvro.converter(branch, dataType)
      true
    } catch { case _: IllegalArgumentException => false }

  private def ofBranchStruct(union: Schema, branches: Seq[Schema], struct: StructType): Any => AnyRef = {
    val indexes = struct.fieldNames.map(branchOf(branches, _).get)
    if (indexes.distinct.length != indexes.length)
      throw new IllegalArgumentException(s"to_glue_schema_registry: fields ${struct.fieldNames.mkString(", ")} " +
        s"name a branch of the Avro union $union twice")
    val converters = indexes.zip(struct.fields).map { case (i, f) => SparkToAvro.converter(branches(i), f.dataType) }
    value => {
      val row = value.asInstanceOf[InternalRow]
      val set = struct.indices.filterNot(row.isNullAt)
      set match {
        case Seq() => null
        case Seq(field) => converters(field)(row.get(field, struct(field).dataType))
        case _ =>
          throw new IllegalArgumentException(s"to_glue_schema_registry: a value of the Avro union $union has " +
            s"fields ${set.map(struct(_).name).mkString(" and ")} set; set only the one of the branch to write")
      }
    }
  }
}
