package io.github.sparkkinesis.payloads

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

/**
 * The schema versions this JVM has fetched, by target and version id, shared by every task and query of the executor. A
 * version is immutable once registered, so an entry is trusted for the JVM's life and never fetched again; a version
 * the registry says does not exist is remembered too (ids are never reused). Other failures (throttling, network) are
 * not cached: the next record asks again, after the SDK's own retries. Entries are bounded by the registry's own quota
 * of versions, a few kilobytes each.
 */
private[sparkkinesis] object SchemaVersionCache {

  private val versions = new ConcurrentHashMap[(GlueTarget, UUID), Either[String, SchemaVersion]]()

  /** The version `id` of `target`, fetched with `fetch` on first use; Left: why it cannot be had. */
  def get(target: GlueTarget, id: UUID, fetch: UUID => SchemaVersion): Either[String, SchemaVersion] = {
    val key = (target, id)
    val cached = versions.get(key)
    if (cached != null) cached
    else {
      val fetched =
        try Right(fetch(id))
        catch { case e: SchemaVersionNotFound => Left(e.getMessage) }
      versions.putIfAbsent(key, fetched)
      fetched
    }
  }
}
