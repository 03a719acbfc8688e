package io.github.sparkkinesis.payloads

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

/**
 * Writer versions resolved against one reader (`readerKey`: the format, the target and the reader's definition): each
 * resolution is made once per writer version and JVM and shared by every decoder of that reader, since versions are
 * immutable; this instance keeps its thread's copy, so that a record costs one lookup by id. A version that cannot be
 * fetched (throttling, network) is not remembered: the next record asks again. One instance serves one thread.
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
      val made = shared(id)
      made match {
        case Left(reason) if reason.contains(CannotFetch) => // asked again next record
        case _ => known.put(id, made)
      }
      made
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

  private def shared(id: UUID): Either[String, R] = {
    val key = (readerKey, id)
    all.get(key) match {
      case null =>
        try {
          val made = versions(id).flatMap(resolve)
          all.putIfAbsent(key, made)
          made
        } catch { case NonFatal(e) => Left(s"schema version $id $CannotFetch: ${e.getMessage}") }
      case cached => cached.asInstanceOf[Either[String, R]]
    }
  }
}

private[payloads] object WriterResolutions {

  /** What a transient failure to fetch a version says: the one outcome not cached, asked again next record. */
  private val CannotFetch = "cannot be fetched"

  /** Resolutions by reader key and writer version, of every format: immutable all, made once a JVM. */
  private val all = new ConcurrentHashMap[(AnyRef, UUID), Either[String, AnyRef]]()
}
