package io.github.sparkkinesis.payloads

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.avro.{Schema, SchemaCompatibility}
import org.apache.avro.generic.GenericDatumReader
import org.apache.avro.io.{BinaryDecoder, DecoderFactory}

import io.github.sparkkinesis.compat.JavaCollections._

/** Why a record was not decoded, and the writer's version id when its frame names one. */
final case class DecodeFailure(versionId: Option[UUID], reason: String)

/** A decoder of Glue Schema Registry frames of one data format into Spark rows of its reader's type; one per thread. */
private[sparkkinesis] trait GsrDecoder {

  /** The record's row (a Spark InternalRow of the reader's type), or why it has none. */
  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any]
}

/**
 * Decodes Glue Schema Registry Avro frames into Spark rows of `reader`'s type: each record's writer version, found with
 * `versions` (the registry of `target`; Left when it cannot be had now, asked again on a later record), is resolved
 * against `reader` by Avro's schema resolution (fields added with defaults, fields removed, promotions such as int to
 * long), once per writer version and JVM. One instance serves one thread.
 */
private[sparkkinesis] final class GsrAvroDecoder(
    target: GlueTarget,
    reader: Schema,
    versions: UUID => Either[String, SchemaVersion])
    extends GsrDecoder {

  private val toSpark = AvroToSpark.converter(reader)
  private var binary: BinaryDecoder = _
  private val resolutions = new WriterResolutions[GenericDatumReader[AnyRef]](
    ("AVRO", target, reader.toString),
    versions,
    GsrAvroDecoder.resolve(reader, _))

  // Made once: a method passed per record would be a new function object each time.
  private val readFrame: (GenericDatumReader[AnyRef], GsrFrame.Parsed) => Either[DecodeFailure, Any] = read

  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any] = resolutions.decode(bytes, readFrame)

  private def read(datumReader: GenericDatumReader[AnyRef], frame: GsrFrame.Parsed): Either[DecodeFailure, Any] = {
    binary = DecoderFactory.get().binaryDecoder(frame.bytes, frame.offset, frame.bytes.length - frame.offset, binary)
    val datum =
      try Right(datumReader.read(null, binary))
      catch {
        case NonFatal(e) =>
          Left(DecodeFailure(
            Some(frame.versionId),
            s"the payload is not Avro of schema version ${frame.versionId}: " +
              s"${e.getClass.getSimpleName}: ${e.getMessage}"))
      }
    datum.flatMap { value =>
      if (!binary.isEnd)
        Left(DecodeFailure(
          Some(frame.versionId),
          s"the payload has bytes left after the record of schema version ${frame.versionId}"))
      else Right(toSpark(value))
    }
  }
}

private[sparkkinesis] object GsrAvroDecoder {

  /** A reader of `writer`'s data as `reader`, or why Avro's resolution rules refuse it. */
  def resolve(reader: Schema, writer: SchemaVersion): Either[String, GenericDatumReader[AnyRef]] =
    if (writer.dataFormat != "AVRO")
      Left(s"schema version ${writer.id} is ${writer.dataFormat}, and the reader schema is Avro")
    else {
      val writerSchema =
        try Right(new Schema.Parser().parse(writer.definition))
        catch { case NonFatal(e) => Left(s"schema version ${writer.id} is not a valid Avro schema: ${e.getMessage}") }
      writerSchema.flatMap { schema =>
        val check = SchemaCompatibility.checkReaderWriterCompatibility(reader, schema)
        if (check.getType == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE)
          Right(new GenericDatumReader[AnyRef](schema, reader))
        else
          Left(s"schema version ${writer.id} cannot be read as the reader schema: " +
            check.getResult.getIncompatibilities.asScala.map(i => s"${i.getMessage} at ${i.getLocation}").mkString(
              "; "))
      }
    }
}
