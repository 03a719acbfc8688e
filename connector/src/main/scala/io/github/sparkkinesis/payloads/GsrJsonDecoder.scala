package io.github.sparkkinesis.payloads

import java.util.UUID

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

  // A JSON version needs no resolution against the reader, so versions are shared by every JSON reader of `target`.
  private val resolutions =
    new WriterResolutions[SchemaVersion](("JSON", target), versions, GsrJsonDecoder.resolve)

  // Made once: a method passed per record would be a new function object each time.
  private val readFrame: (SchemaVersion, GsrFrame.Parsed) => Either[DecodeFailure, Any] = (_, frame) => read(frame)

  def decode(bytes: Array[Byte]): Either[DecodeFailure, Any] = resolutions.decode(bytes, readFrame)

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

  /** `writer` when its records can be read by a JSON Schema reader, or why not. */
  def resolve(writer: SchemaVersion): Either[String, SchemaVersion] =
    if (writer.dataFormat != "JSON")
      Left(s"schema version ${writer.id} is ${writer.dataFormat}, and the reader schema is a JSON Schema")
    else Right(writer)
}
