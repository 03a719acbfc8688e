package io.github.sparkkinesis.client

import java.util.concurrent.ConcurrentHashMap

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * One resource per key, opened on first use, lent for the length of a call ([[use]]), and closed and forgotten by
 * [[sweep]] once no call has used it for `idleMs`. Keys made of options that rotate (credentials given as options) thus
 * leave nothing behind once their last user is gone; the next call with such a key opens a new resource.
 */
private[sparkkinesis] final class IdleCache[K, R](open: K => R, close: R => Unit, idleMs: Long, clock: () => Long) {

  private final class Entry(val resource: R) {
    var inFlight = 0 // guarded by this
    var lastUsedMs: Long = clock() // guarded by this
    var closed = false // guarded by this
  }

  private val entries = new ConcurrentHashMap[K, Entry]()

  /** Runs `call` with the resource of `key`, which no sweep closes while the call runs. */
  def use[T](key: K)(call: R => T): T = {
    val entry = acquire(key)
    try call(entry.resource)
    finally entry.synchronized {
        entry.inFlight -= 1
        entry.lastUsedMs = clock()
      }
  }

  /** Closes and forgets the resources unused for `idleMs`; returns how many. */
  def sweep(): Int = entries.asScala.toVector.count { case (key, entry) =>
    val idle = entry.synchronized {
      val idle = !entry.closed && entry.inFlight == 0 && clock() - entry.lastUsedMs >= idleMs
      if (idle) entry.closed = true
      idle
    }
    if (idle) {
      entries.remove(key, entry)
      close(entry.resource)
    }
    idle
  }

  /** How many resources are held now. */
  def size: Int = entries.size

  /** The entry of `key`, counted in flight; one a sweep closed meanwhile is replaced by a new one. */
  @annotation.tailrec
  private def acquire(key: K): Entry = {
    val entry = entries.computeIfAbsent(
      key,
      new java.util.function.Function[K, Entry] {
        override def apply(k: K): Entry = new Entry(open(k))
      })
    val taken = entry.synchronized {
      if (!entry.closed) entry.inFlight += 1
      !entry.closed
    }
    if (taken) entry
    else {
      entries.remove(key, entry)
      acquire(key)
    }
  }
}
