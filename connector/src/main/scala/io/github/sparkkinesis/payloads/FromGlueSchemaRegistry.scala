package io.github.sparkkinesis.payloads

import java.util.UUID

import org.apache.avro.Schema
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType, StringType, StructType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * What `from_glue_schema_registry` decodes with: the registry (`target`, `registry`, `schema`), the reader schema's
 * data format (AVRO, JSON or PROTOBUF, as the registry names them) and definition (for PROTOBUF, `readerMessage` names
 * the message, else the first one), FAILFAST or not, and the field that holds why a record was not decoded
 * (PERMISSIVE).
 */
final case class GsrReadSpec(
    target: GlueTarget,
    registry: String,
    schema: String,
    dataFormat: String,
    readerDefinition: String,
    readerMessage: Option[String],
    failFast: Boolean,
    errorColumn: Option[String])

/** The one place that chooses by the reader's data format: its Spark type and its decoder. */
private[sparkkinesis] object GsrReadSpec {
  val Avro = "AVRO"
  val Json = "JSON"
  val Protobuf = "PROTOBUF"

  /** The data formats `from_glue_schema_registry` decodes. */
  val Formats: Seq[String] = Seq(Avro, Json, Protobuf)

  /**
   * The struct the reader schema of `spec` decodes into (without the error column); fails on what Spark cannot type.
   */
  def readerType(spec: GsrReadSpec): StructType = spec.dataFormat match {
    case Json => JsonSchemaToSpark.reader(spec.readerDefinition).sparkType
    case Protobuf => new ProtobufReader(spec.readerDefinition, spec.readerMessage).sparkType
    case _ => AvroToSpark.sparkType(new Schema.Parser().parse(spec.readerDefinition)).asInstanceOf[StructType]
  }

  /** A decoder of `spec`'s records, finding writer versions with `versions`. */
  def decoder(spec: GsrReadSpec, versions: UUID => Either[String, SchemaVersion]): GsrDecoder = spec.dataFormat match {
    case Json => new GsrJsonDecoder(spec.target, JsonSchemaToSpark.reader(spec.readerDefinition), versions)
    case Protobuf =>
      new GsrProtobufDecoder(spec.target, new ProtobufReader(spec.readerDefinition, spec.readerMessage), versions)
    case _ => new GsrAvroDecoder(spec.target, new Schema.Parser().parse(spec.readerDefinition), versions)
  }
}

/** A record FAILFAST could not decode: the message names the writer's version, the position when known, and why. */
final class GlueSchemaRegistryDecodeException(message: String) extends RuntimeException(message)

/**
 * Decodes a Glue Schema Registry frame into a struct of the reader schema's fields (plus the error column, when named).
 * The input is the binary payload, or a struct holding it as `data` with the record's `shardId` and `sequenceNumber`,
 * which FAILFAST's message then names. A null payload gives null.
 */
final case class FromGlueSchemaRegistry(child: Expression, spec: GsrReadSpec)
    extends UnaryExpression
    with CodegenFallback {

  @transient private lazy val decoder = GsrReadSpec.decoder(
    spec,
    id => SchemaVersionCache.shared.get(spec.target, id, new GlueSchemaRegistry(spec.target).version))

  override lazy val dataType: DataType = {
    val fields = GsrReadSpec.readerType(spec)
    spec.errorColumn.fold(fields)(fields.add(_, StringType))
  }

  override def nullable: Boolean = true

  override def prettyName: String = "from_glue_schema_registry"

  /** Ordinals of data, shardId and sequenceNumber in a struct input (-1 when absent); None for a binary input. */
  @transient private lazy val ordinals: Option[(Int, Int, Int)] = child.dataType match {
    case s: StructType => Some((s.fieldIndex("data"), index(s, "shardId"), index(s, "sequenceNumber")))
    case _ => None
  }

  private def index(struct: StructType, name: String): Int =
    struct.fields.indexWhere(f => f.name == name && f.dataType == StringType)

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case BinaryType => TypeCheckResult.TypeCheckSuccess
    case s: StructType if s.fields.exists(f => f.name == "data" && f.dataType == BinaryType) =>
      TypeCheckResult.TypeCheckSuccess
    case other =>
      TypeCheckResult.TypeCheckFailure(s"from_glue_schema_registry takes the binary data column, or a struct of it " +
        s"(as data) with shardId and sequenceNumber, not ${other.simpleString}")
  }

  override def eval(input: InternalRow): Any = {
    val value = child.eval(input)
    val bytes = value match {
      case null => null
      case binary: Array[Byte] => binary
      case row: InternalRow =>
        val data = ordinals.fold(0)(_._1)
        if (row.isNullAt(data)) null else row.getBinary(data)
    }
    if (bytes == null) null
    else decoder.decode(bytes) match {
      case Right(row) => spec.errorColumn.fold(row)(_ => withReason(row.asInstanceOf[GenericInternalRow].values, null))
      case Left(failure) =>
        if (spec.failFast) throw new GlueSchemaRegistryDecodeException(failFastMessage(failure, value))
        else spec.errorColumn.fold[Any](null)(_ => withReason(Array.empty, UTF8String.fromString(failure.reason)))
    }
  }

  /** The fields, then the reason: null fields when there are none (a record not decoded). */
  private def withReason(fields: Array[Any], reason: UTF8String): InternalRow = {
    val size = dataType.asInstanceOf[StructType].size
    val values = java.util.Arrays.copyOf(fields.asInstanceOf[Array[AnyRef]], size).asInstanceOf[Array[Any]]
    values(size - 1) = reason
    new GenericInternalRow(values)
  }

  private def failFastMessage(failure: DecodeFailure, value: Any): String = {
    val position = (value, ordinals) match {
      case (row: InternalRow, Some((_, shard, sequence))) if shard >= 0 && sequence >= 0 =>
        s"the record at sequence number ${row.getUTF8String(sequence)} of shard ${row.getUTF8String(shard)}"
      case _ => "a record (pass struct(data, shardId, sequenceNumber) as the column to have its position named)"
    }
    val version = failure.versionId.fold("with no schema version id")(id => s"of schema version $id")
    s"from_glue_schema_registry (mode FAILFAST) cannot decode $position $version, for schema '${spec.schema}' in " +
      s"registry '${spec.registry}': ${failure.reason}. Set option mode to PERMISSIVE, with errorColumn, to keep " +
      "such records as null and see why."
  }

  override protected def withNewChildInternal(newChild: Expression): FromGlueSchemaRegistry = copy(child = newChild)
}
