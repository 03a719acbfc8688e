package io.github.sparkkinesis.payloads

import java.util.UUID

import scala.util.control.NonFatal

import com.google.protobuf.{CodedInputStream, DynamicMessage}
import com.google.protobuf.Descriptors.Descriptor
import org.apache.spark.sql.types.StructType

/**
 * The reader of `from_glue_schema_registry` for PROTOBUF: a definition (.proto text) and the message of it whose fields
 * become the struct's (`message`, else the definition's first top-level message).
 */
private[sparkkinesis] final class ProtobufReader(val definition: String, messageName: Option[String]) {

  /** The reader's message; fails naming why the definition or the name is not usable. */
  val message: Descriptor = ProtoSchema.parse(definition) match {
    case Right(schema) => schema.message(messageName)
    case Left(reason) => throw new IllegalArgumentException(s"the reader's .proto definition is not valid: $reason")
  }

  lazy val sparkType: StructType = ProtobufToSpark.sparkType(message)
}

/**
 * Decodes Glue Schema Registry Protobuf frames: after the frame's prefix, the message index (a varint: which message of
 * the writer version's file, counted in the order of full names) and the message. A record must be the reader's
 * message, by full name; it is parsed with the reader's descriptor, so that versions resolve by protobuf's own rules:
 * fields matched by number, fields the reader lacks dropped, fields the writer lacks absent (null or default). Each
 * writer version is fetched and parsed once per JVM. One instance serves one thread.
 */
private[sparkkinesis] final class GsrProtobufDecoder(
    target: GlueTarget,
    reader: ProtobufReader,
    versions: UUID => Either[String, SchemaVersion])
    extends GsrDecoder {

  private val toSpark = ProtobufToSpark.converter(reader.message)
  private val readerName = reader.message.getFullName
  private val resolutions = new WriterResolutions[WriterMessages](
    ("PROTOBUF", target, reader.definition, readerName),
    versions,
    GsrProtobufDecoder.resolve(readerName, _))

  // Made once: a method passed per record would be a new function object each time.
  private val readFrame: (WriterMessages, GsrFrame.Parsed) => Either[DecodeFailure, Any] =
    (writer, frame) => read(writer, frame).left.map(reason => DecodeFailure(Some(frame.versionId), reason))

  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any] = resolutions.decode(bytes, readFrame)

  private def read(writer: WriterMessages, frame: GsrFrame.Parsed): Either[String, Any] =
    try {
      val in = CodedInputStream.newInstance(frame.bytes, frame.offset, frame.bytes.length - frame.offset)
      val index = in.readUInt32()
      if (index != writer.readerIndex)
        Left(s"the record is message ${writer.names.lift(index).getOrElse(s"index $index, which schema version " +
            s"${frame.versionId} does not have")}, not the reader's $readerName")
      else Right(toSpark(DynamicMessage.parseFrom(reader.message, in)))
    } catch {
      case NonFatal(e) =>
        Left(s"the payload is not a Protobuf $readerName of schema version ${frame.versionId}: " +
          s"${e.getClass.getSimpleName}: ${e.getMessage}")
    }
}

/** A writer version's messages by message index, and the index of the reader's message among them. */
private[payloads] final case class WriterMessages(names: IndexedSeq[String], readerIndex: Int)

private[sparkkinesis] object GsrProtobufDecoder {

  /** Where the reader's message `readerName` is in `writer`'s message indices, or why its records cannot be read. */
  def resolve(readerName: String, writer: SchemaVersion): Either[String, WriterMessages] =
    if (writer.dataFormat != "PROTOBUF")
      Left(s"schema version ${writer.id} is ${writer.dataFormat}, and the reader schema is Protobuf")
    else
      ProtoSchema.parse(writer.definition).left.map(reason =>
        s"schema version ${writer.id} is not a valid .proto definition: $reason").flatMap { schema =>
        val names = schema.byIndex.map(_.getFullName)
        schema.indexOf(readerName).map(WriterMessages(names, _)).toRight(
          s"schema version ${writer.id} has no message $readerName (it has ${names.mkString(", ")})")
      }
}
