package io.github.sparkkinesis.payloads

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.avro.{Schema, SchemaCompatibility}
import org.apache.avro.generic.GenericDatumReader
import org.apache.avro.io.{BinaryDecoder, DecoderFactory}

import io.github.sparkkinesis.compat.JavaCollections._

/** Why a record was not decoded, and the writer's version id when its frame names one. */
final case class DecodeFailure(versionId: Option[UUID], reason: String)

/** A decoder of Glue Schema Registry frames of one data format into rows of its reader schema; one per thread. */
private[sparkkinesis] trait GsrDecoder {

  /** The record's row (a Spark InternalRow of the reader's type), or why it has none. */
  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any]
}

/**
 * Decodes Glue Schema Registry Avro frames into Spark rows of `reader`'s type: each record's writer version, found with
 * `versions` (the registry of `target`), is resolved against `reader` by Avro's schema resolution (fields added with
 * defaults, fields removed, promotions such as int to long), once per writer version and JVM. One instance serves one
 * thread.
 */
private[sparkkinesis] final class GsrAvroDecoder(
    target: GlueTarget,
    reader: Schema,
    versions: UUID => Either[String, SchemaVersion])
    extends GsrDecoder {

  private val toSpark = AvroToSpark.converter(reader)
  private val readerKey = (target, reader.toString)
  private var binary: BinaryDecoder = _
  // This thread's copy of the JVM's resolutions, so that a record costs one lookup by id.
  private val known = new java.util.HashMap[UUID, Either[String, GenericDatumReader[AnyRef]]]()

  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any] =
    GsrFrame.parse(bytes) match {
      case Left(reason) => Left(DecodeFailure(GsrFrame.versionIdOf(bytes), reason))
      case Right(frame) =>
        val datumReader = known.get(frame.versionId) match {
          case null =>
            val made = GsrAvroDecoder.resolved(readerKey, reader, frame.versionId, versions)
            made match {
              case Left(reason) if reason.contains(GsrAvroDecoder.CannotFetch) => // asked again next record
              case _ => known.put(frame.versionId, made)
            }
            made
          case cached => cached
        }
        datumReader match {
          case Left(reason) => Left(DecodeFailure(Some(frame.versionId), reason))
          case Right(datumReader) => read(datumReader, frame)
        }
    }

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

  /** What a transient failure to fetch a version says: the one outcome not cached, asked again next record. */
  private val CannotFetch = "cannot be fetched"

  /** Datum readers by target, reader definition and writer version: immutable all, resolved once a JVM. */
  private val readers =
    new ConcurrentHashMap[((GlueTarget, String), UUID), Either[String, GenericDatumReader[AnyRef]]]()

  private def resolved(
      readerKey: (GlueTarget, String),
      reader: Schema,
      writerId: UUID,
      versions: UUID => Either[String, SchemaVersion]): Either[String, GenericDatumReader[AnyRef]] = {
    val key = (readerKey, writerId)
    val cached = readers.get(key)
    if (cached != null) cached
    else
      try {
        val made = versions(writerId).flatMap(resolve(reader, _))
        readers.putIfAbsent(key, made)
        made
      } catch { case NonFatal(e) => Left(s"schema version $writerId $CannotFetch: ${e.getMessage}") }
  }

  /** A reader of `writer`'s data as `reader`, or why Avro's resolution rules refuse it. */
  def resolve(reader: Schema, writer: SchemaVersion): Either[String, GenericDatumReader[AnyRef]] =
    if (writer.dataFormat != "AVRO")
      Left(s"schema version ${writer.id} is ${writer.dataFormat}, and this decoder reads Avro only")
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
