package io.github.sparkkinesis.payloads

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

/**
 * Writer versions resolved against one reader (`readerKey`: the format, the target and the reader's definition): each
 * resolution is made once per writer version and JVM and shared by every decoder of that reader, since versions are
 * immutable; this instance keeps its thread's copy, so that a record costs one lookup by id. A version `versions`
 * cannot give now (not found, throttling, an outage) is not kept here: `versions` ([[SchemaVersionCache]]) decides when
 * it is asked again. One instance serves one thread.
 */
private[payloads] final class WriterResolutions[R <: AnyRef](
    readerKey: AnyRef,
    versions: UUID => Either[String, SchemaVersion],
    resolve: SchemaVersion => Either[String, R]) {
  import WriterResolutions._

  private val known = new java.util.HashMap[UUID, Either[String, R]]()

  /** How to read frames of writer version `id`, or why they cannot be read. */
  def apply(id: UUID): Either[String, R] = known.get(id) match {
    case null =>
      versions(id) match {
        case Left(reason) => Left(reason) // not kept: `versions` says when it is worth asking again
        case Right(version) =>
          val made = shared(version)
          known.put(id, made)
          made
      }
    case cached => cached
  }

  /** The record in `bytes` read by `read` with its frame and its writer version's resolution, or why it cannot be. */
  def decode(bytes: Array[Byte], read: (R, GsrFrame.Parsed) => Either[DecodeFailure, Any]): Either[DecodeFailure, Any] =
    GsrFrame.parse(bytes) match {
      case Left(reason) => Left(DecodeFailure(GsrFrame.versionIdOf(bytes), reason))
      case Right(frame) =>
        apply(frame.versionId) match {
          case Left(reason) => Left(DecodeFailure(Some(frame.versionId), reason))
          case Right(resolved) => read(resolved, frame)
        }
    }

  private def shared(version: SchemaVersion): Either[String, R] =
    all.computeIfAbsent(
      (readerKey, version.id),
      _ =>
        try resolve(version)
        catch { case NonFatal(e) => Left(s"schema version ${version.id} cannot be resolved: ${e.getMessage}") })
      .asInstanceOf[Either[String, R]]
}

private[payloads] object WriterResolutions {

  /** Resolutions by reader key and writer version, of every format: immutable all, made once a JVM. */
  private val all = new ConcurrentHashMap[(AnyRef, UUID), Either[String, AnyRef]]()
}
