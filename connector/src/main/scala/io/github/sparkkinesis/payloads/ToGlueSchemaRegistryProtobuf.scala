package io.github.sparkkinesis.payloads

import java.util.UUID

import scala.util.control.NonFatal

import com.google.protobuf.{CodedOutputStream, Message}
import com.google.protobuf.Descriptors.Descriptor
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType, StructType}

/**
 * The writer of `to_glue_schema_registry` for PROTOBUF: a definition (.proto text) and the message of it the struct is
 * written as (`messageName`, else the definition's first top-level message), as [[ProtobufReader]] chooses it.
 */
private[sparkkinesis] final class ProtobufWriter(val definition: String, messageName: Option[String]) {
  private val schema = ProtoSchema.parse(definition).fold(
    reason =>
      throw new IllegalArgumentException(s"option ${GsrOptions.ProtobufSchema} is not a valid .proto " +
        s"definition: $reason"),
    identity)

  /** The message written; fails naming the messages there are when `messageName` is none of them. */
  val message: Descriptor = schema.message(messageName)

  /** The message's index in the definition: what precedes each message in a frame. */
  val index: Int = schema.indexOf(message.getFullName).get

  /** A GSR Protobuf payload: the message index as a varint, then the message, as AWS's serializer lays them out. */
  def payload(record: Message): Array[Byte] = {
    val bytes = new Array[Byte](CodedOutputStream.computeUInt32SizeNoTag(index) + record.getSerializedSize)
    val out = CodedOutputStream.newInstance(bytes)
    out.writeUInt32NoTag(index)
    record.writeTo(out)
    out.checkNoSpaceLeft()
    bytes
  }
}

/**
 * Encodes a struct as the Protobuf message `messageName` of `definition`, framed for the Glue Schema Registry with the
 * id of the version whose definition it is (looked up once per JVM, registered first with `auto_register`). The struct
 * must fit the message ([[SparkToProtobuf]]), checked when the expression is analysed. A null struct gives null.
 */
final case class ToGlueSchemaRegistryProtobuf(
    child: Expression,
    spec: GsrWriteSpec,
    definition: String,
    messageName: Option[String])
    extends UnaryExpression
    with CodegenFallback {

  override def dataType: DataType = BinaryType

  override def prettyName: String = "to_glue_schema_registry"

  @transient private lazy val writer = new ProtobufWriter(definition, messageName)

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case struct: StructType =>
      try {
        SparkToProtobuf.converter(writer.message, struct)
        TypeCheckResult.TypeCheckSuccess
      } catch {
        case NonFatal(e) =>
          TypeCheckResult.TypeCheckFailure(s"$prettyName cannot write the struct as protobuf message " +
            s"${writer.message.getFullName}: ${e.getMessage}")
      }
    case other => TypeCheckResult.TypeCheckFailure(s"$prettyName takes a struct column, not ${other.simpleString}")
  }

  @transient private lazy val toProtobuf =
    SparkToProtobuf.converter(writer.message, child.dataType.asInstanceOf[StructType])
  @transient private lazy val versionId: UUID = WriterVersions.idOf(spec, definition, GsrReadSpec.Protobuf)

  override protected def nullSafeEval(input: Any): Any =
    GsrFrame.write(versionId, writer.payload(toProtobuf(input.asInstanceOf[InternalRow])), spec.zlib)

  override protected def withNewChildInternal(newChild: Expression): ToGlueSchemaRegistryProtobuf =
    copy(child = newChild)
}
