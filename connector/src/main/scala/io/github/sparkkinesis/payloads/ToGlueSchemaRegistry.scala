package io.github.sparkkinesis.payloads

import java.io.ByteArrayOutputStream
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import org.apache.avro.Schema
import org.apache.avro.generic.GenericDatumWriter
import org.apache.avro.io.{BinaryEncoder, EncoderFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType, StructType}

/**
 * What `to_glue_schema_registry` frames with: the registry, the writer's Avro definition (None: derived from the
 * struct's type), whether a definition the registry lacks is registered, and zlib compression.
 */
final case class GsrWriteSpec(
    target: GlueTarget,
    registry: String,
    schema: String,
    avroDefinition: Option[String],
    autoRegister: Boolean,
    zlib: Boolean)

/**
 * Encodes a struct as Avro of the writer schema, framed for the Glue Schema Registry with the schema's version id. The
 * version is looked up by definition once per JVM (registered first with `auto_register`); a null struct gives null.
 */
final case class ToGlueSchemaRegistry(child: Expression, spec: GsrWriteSpec) extends UnaryExpression
    with CodegenFallback {

  override def dataType: DataType = BinaryType

  override def prettyName: String = "to_glue_schema_registry"

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case _: StructType => TypeCheckResult.TypeCheckSuccess
    case other =>
      TypeCheckResult.TypeCheckFailure(s"to_glue_schema_registry takes a struct column, not ${other.simpleString}")
  }

  @transient private lazy val writerSchema: Schema = spec.avroDefinition.fold(
    SparkToAvro.schemaOf(child.dataType.asInstanceOf[StructType], spec.schema))(new Schema.Parser().parse(_))

  @transient private lazy val toAvro = SparkToAvro.converter(writerSchema, child.dataType)
  @transient private lazy val writer = new GenericDatumWriter[AnyRef](writerSchema)
  @transient private lazy val versionId: UUID = WriterVersions.idOf(spec, writerSchema.toString)
  @transient private lazy val buffer = new ByteArrayOutputStream(256)
  @transient private var encoder: BinaryEncoder = _

  override protected def nullSafeEval(input: Any): Any = {
    val datum = toAvro(input.asInstanceOf[InternalRow])
    buffer.reset()
    encoder = EncoderFactory.get().binaryEncoder(buffer, encoder)
    writer.write(datum, encoder)
    encoder.flush()
    GsrFrame.write(versionId, buffer.toByteArray, spec.zlib)
  }

  override protected def withNewChildInternal(newChild: Expression): ToGlueSchemaRegistry = copy(child = newChild)
}

/** The writers' schema version ids by target, registry, schema and definition: looked up once a JVM. */
private object WriterVersions {
  private val ids = new ConcurrentHashMap[(GlueTarget, String, String, String), UUID]()

  /** The id of `definition`'s version (registered as `dataFormat` with auto_register when missing). */
  def idOf(spec: GsrWriteSpec, definition: String, dataFormat: String = GsrReadSpec.Avro): UUID =
    ids.computeIfAbsent(
      (spec.target, spec.registry, spec.schema, definition),
      _ => {
        val registry = new GlueSchemaRegistry(spec.target)
        registry.versionOf(spec.registry, spec.schema, definition).getOrElse {
          refuseOtherFormats(registry, spec, dataFormat)
          if (spec.autoRegister) registry.register(spec.registry, spec.schema, definition, dataFormat)
          else throw new IllegalStateException(
            s"to_glue_schema_registry: schema '${spec.schema}' in registry '${spec.registry}' has no version with " +
              s"the writer's definition $definition. Register it (aws glue register-schema-version), or set option " +
              s"${GsrOptions.AutoRegister} to true to have it registered.")
        }
      })

  /** Fails when the schema exists in another data format than `dataFormat`, the one this call writes. */
  private def refuseOtherFormats(registry: GlueSchemaRegistry, spec: GsrWriteSpec, dataFormat: String): Unit = {
    // A schema not there yet (or out of reach: the call that follows says why) is no other format.
    val format =
      try Some(registry.latest(spec.registry, spec.schema).dataFormat)
      catch { case _: GlueCallFailed => None }
    format.filter(_ != dataFormat).foreach { other =>
      throw new IllegalStateException(s"to_glue_schema_registry: schema '${spec.schema}' in registry " +
        s"'${spec.registry}' is $other, and this call writes $dataFormat (this function writes AVRO, JSON with " +
        s"option ${GsrOptions.JsonSchema}, or PROTOBUF with option ${GsrOptions.ProtobufSchema}). Write to a schema " +
        "of the format written, or give the option of that schema's format.")
    }
  }
}
