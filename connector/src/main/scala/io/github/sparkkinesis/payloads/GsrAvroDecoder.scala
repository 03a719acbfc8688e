package io.github.sparkkinesis.payloads

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.avro.{Schema, SchemaCompatibility}
import org.apache.avro.io.{BinaryDecoder, Decoder, DecoderFactory, ResolvingDecoder}

import io.github.sparkkinesis.compat.JavaCollections._

/** Why a record was not decoded, and the writer's version id when its frame names one. */
final case class DecodeFailure(versionId: Option[UUID], reason: String)

/** A decoder of Glue Schema Registry frames of one data format into Spark rows of its reader's type; one per thread. */
private[sparkkinesis] trait GsrDecoder {

  /** The record's row (a Spark InternalRow of the reader's type), or why it has none. */
  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any]
}

/**
 * A writer version's Avro schema, checked against the reader's: data of the reader's own schema is read straight, other
 * data through a resolving decoder (Avro's rules), made per thread by [[GsrAvroDecoder]].
 */
private[payloads] final class AvroWriterSchema(val schema: Schema, reader: Schema) {
  val isReader: Boolean = schema == reader

  /** A new decoder resolving this schema's data to the reader's (aliases applied, as Avro's own readers do). */
  def resolvingDecoder(): ResolvingDecoder =
    DecoderFactory.get().resolvingDecoder(Schema.applyAliases(schema, reader), reader, null)
}

/**
 * Decodes Glue Schema Registry Avro frames into Spark rows of `reader`'s type: each record's writer version, found with
 * `versions` (the registry of `target`; Left when it cannot be had now, asked again on a later record), is resolved
 * against `reader` by Avro's schema resolution (fields added with defaults, fields removed, promotions such as int to
 * long), checked once per writer version and JVM. One instance serves one thread.
 */
private[sparkkinesis] final class GsrAvroDecoder(
    target: GlueTarget,
    reader: Schema,
    versions: UUID => Either[String, SchemaVersion])
    extends GsrDecoder {

  private val toSpark = AvroToSpark.reader(reader)
  private var binary: BinaryDecoder = _
  private val resolutions = new WriterResolutions[AvroWriterSchema](
    ("AVRO", target, reader.toString),
    versions,
    GsrAvroDecoder.resolve(reader, _))

  // This thread's resolving decoders (they keep state), by writer; the last one used is at hand, since consecutive
  // records mostly share their writer version.
  private val resolving = new java.util.IdentityHashMap[AvroWriterSchema, ResolvingDecoder]()
  private var lastWriter: AvroWriterSchema = _
  private var lastResolving: ResolvingDecoder = _

  // Made once: a method passed per record would be a new function object each time.
  private val readFrame: (AvroWriterSchema, GsrFrame.Parsed) => Either[DecodeFailure, Any] = read

  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any] = resolutions.decode(bytes, readFrame)

  private def read(writer: AvroWriterSchema, frame: GsrFrame.Parsed): Either[DecodeFailure, Any] = {
    val id = frame.versionId
    binary = DecoderFactory.get().binaryDecoder(frame.bytes, frame.offset, frame.bytes.length - frame.offset, binary)
    val row =
      try Right(if (writer.isReader) toSpark(binary) else resolved(writer))
      catch {
        case e: ArithmeticException =>
          Left(DecodeFailure(Some(id), s"a value of schema version $id does not fit its Spark type: ${e.getMessage}"))
        case NonFatal(e) =>
          Left(DecodeFailure(
            Some(id),
            s"the payload is not Avro of schema version $id: ${e.getClass.getSimpleName}: ${e.getMessage}"))
      }
    if (row.isRight && !binary.isEnd)
      Left(DecodeFailure(Some(id), s"the payload has bytes left after the record of schema version $id"))
    else row
  }

  /** The record read through `writer`'s resolving decoder, to its end (writer fields the reader drops included). */
  private def resolved(writer: AvroWriterSchema): Any = {
    if (writer ne lastWriter) {
      lastResolving = resolving.computeIfAbsent(writer, _.resolvingDecoder())
      lastWriter = writer
    }
    val in: Decoder = lastResolving.configure(binary)
    val row = toSpark(in)
    lastResolving.drain()
    row
  }
}

private[sparkkinesis] object GsrAvroDecoder {

  /** `writer`'s schema, to be read as `reader`, or why Avro's resolution rules refuse it. */
  def resolve(reader: Schema, writer: SchemaVersion): Either[String, AvroWriterSchema] =
    if (writer.dataFormat != "AVRO")
      Left(s"schema version ${writer.id} is ${writer.dataFormat}, and the reader schema is Avro")
    else {
      val writerSchema =
        try Right(new Schema.Parser().parse(writer.definition))
        catch { case NonFatal(e) => Left(s"schema version ${writer.id} is not a valid Avro schema: ${e.getMessage}") }
      writerSchema.flatMap { schema =>
        val check = SchemaCompatibility.checkReaderWriterCompatibility(reader, schema)
        if (check.getType == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE)
          Right(new AvroWriterSchema(schema, reader))
        else
          Left(s"schema version ${writer.id} cannot be read as the reader schema: " +
            check.getResult.getIncompatibilities.asScala.map(i => s"${i.getMessage} at ${i.getLocation}").mkString(
              "; "))
      }
    }
}
