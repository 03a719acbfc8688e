package io.github.sparkkinesis.payloads

import java.util.UUID

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonProcessingException, JsonToken}

/**
 * Decodes Glue Schema Registry JSON frames into Spark rows of `reader`'s struct. A writer version (found with
 * `versions`, the registry of `target`) needs only to exist and be JSON: each record is read by the reader's schema,
 * its properties the reader lacks skipped, the reader's properties it lacks null, and a value of another type than the
 * reader's an error. Records are not validated against the writer's schema (its constraints: required, patterns,
 * ranges). One instance serves one thread.
 */
private[sparkkinesis] final class GsrJsonDecoder(
    target: GlueTarget,
    reader: JsonShape.Record,
    versions: UUID => Either[String, SchemaVersion])
    extends GsrDecoder {

  // This thread's verdicts on the writer versions it met (None: readable), so that a record costs one lookup by id.
  private val known = new java.util.HashMap[UUID, Option[String]]()

  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any] =
    GsrFrame.parse(bytes) match {
      case Left(reason) => Left(DecodeFailure(GsrFrame.versionIdOf(bytes), reason))
      case Right(frame) =>
        val verdict = known.get(frame.versionId) match {
          case null =>
            val made = check(frame.versionId)
            // A version that could not be fetched is asked for again with the next record; the others are final.
            if (!made.exists(_.contains(GsrJsonDecoder.CannotFetch))) known.put(frame.versionId, made)
            made
          case cached => cached
        }
        verdict match {
          case Some(reason) => Left(DecodeFailure(Some(frame.versionId), reason))
          case None => read(frame)
        }
    }

  private def check(id: UUID): Option[String] =
    try versions(id) match {
        case Left(reason) => Some(reason)
        case Right(version) if version.dataFormat != "JSON" =>
          Some(s"schema version $id is ${version.dataFormat}, and the reader schema is a JSON Schema")
        case Right(_) => None
      }
    catch { case NonFatal(e) => Some(s"schema version $id ${GsrJsonDecoder.CannotFetch}: ${e.getMessage}") }

  private def read(frame: GsrFrame.Parsed): Either[DecodeFailure, Any] = {
    def failure(why: String) =
      Left(DecodeFailure(Some(frame.versionId), s"the payload of schema version ${frame.versionId} $why"))
    try Right(JsonReading.document(JsonReading.parser(frame.bytes, frame.offset), "a JSON object") { p =>
        if (p.currentToken() == JsonToken.VALUE_NULL) PayloadError("the record is null, not a JSON object")
        reader.read(p)
      })
    catch {
      case e: PayloadError => failure(s"does not match the reader schema: ${e.getMessage}")
      case e: JsonProcessingException => failure(s"is not JSON: ${e.getOriginalMessage}")
      case e: ArithmeticException => failure(s"has a date or time beyond Spark's range: ${e.getMessage}")
    }
  }
}

private object GsrJsonDecoder {

  /** What a transient failure to fetch a version says: the one verdict not kept, asked again next record. */
  private val CannotFetch = "cannot be fetched"
}
