package io.github.sparkkinesis.payloads

import java.util.UUID
import java.util.concurrent.{ConcurrentHashMap, TimeUnit}

import scala.util.control.NonFatal

/**
 * Schema versions by target and version id, fetched once and shared by every task of the JVM. A fetched version is kept
 * for the JVM's life: versions are immutable. A failed fetch (the version not found, throttling, an outage) is
 * remembered for `failureTtlNanos` and only then asked again, so that a registry outage costs one call per version and
 * TTL rather than one per record. "Not found" is not kept for good: the registry is eventually consistent, so a version
 * a producer registered a moment ago may not be visible yet, and a target's credentials or endpoint may be fixed.
 */
private[sparkkinesis] final class SchemaVersionCache(failureTtlNanos: Long, nanoTime: () => Long) {

  /** The outcome of the last fetch of one version; fetches of it are serialised, so a retry is one call. */
  private final class Entry(id: UUID) {
    @volatile private var outcome: Either[String, SchemaVersion] = _
    private var retryAt = 0L

    def get(fetch: => SchemaVersion): Either[String, SchemaVersion] = {
      val known = outcome
      if (known != null && known.isRight) known
      else synchronized {
        if (outcome == null || (outcome.isLeft && nanoTime() - retryAt >= 0)) {
          outcome =
            try Right(fetch)
            catch {
              case e: SchemaVersionNotFound => Left(e.getMessage)
              case NonFatal(e) => Left(s"schema version $id cannot be fetched: ${e.getMessage}")
            }
          retryAt = nanoTime() + failureTtlNanos
        }
        outcome
      }
    }
  }

  private val entries = new ConcurrentHashMap[(GlueTarget, UUID), Entry]()

  /** The version `id` of `target`, fetched with `fetch` unless known; Left: why it cannot be had now. */
  def get(target: GlueTarget, id: UUID, fetch: UUID => SchemaVersion): Either[String, SchemaVersion] =
    entries.computeIfAbsent((target, id), _ => new Entry(id)).get(fetch(id))
}

private[sparkkinesis] object SchemaVersionCache {

  /** How long a failed fetch is remembered: short enough that a version or a registry back is seen within seconds. */
  val FailureTtlNanos: Long = TimeUnit.SECONDS.toNanos(5)

  /** The executor's cache, shared by every query and task of its JVM. */
  val shared = new SchemaVersionCache(FailureTtlNanos, () => System.nanoTime())
}
