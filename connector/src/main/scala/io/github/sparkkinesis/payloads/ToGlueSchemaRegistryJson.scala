package io.github.sparkkinesis.payloads

import java.util.UUID

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * Frames JSON text (`child`: the struct written by Spark's `to_json`) for the Glue Schema Registry with the id of the
 * version of the schema whose definition is `jsonDefinition`; the JSON is not validated against it. Null gives null.
 */
final case class ToGlueSchemaRegistryJson(child: Expression, spec: GsrWriteSpec, jsonDefinition: String)
    extends UnaryExpression
    with CodegenFallback {

  override def dataType: DataType = BinaryType

  override def prettyName: String = "to_glue_schema_registry"

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case _: StringType => TypeCheckResult.TypeCheckSuccess
    case other => TypeCheckResult.TypeCheckFailure(s"$prettyName frames JSON text, not ${other.simpleString}")
  }

  @transient private lazy val versionId: UUID = WriterVersions.idOf(spec, jsonDefinition, GsrReadSpec.Json)

  override protected def nullSafeEval(input: Any): Any =
    GsrFrame.write(versionId, input.asInstanceOf[UTF8String].getBytes, spec.zlib)

  override protected def withNewChildInternal(newChild: Expression): ToGlueSchemaRegistryJson =
    copy(child = newChild)
}
