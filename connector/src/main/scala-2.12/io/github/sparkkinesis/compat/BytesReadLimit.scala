package io.github.sparkkinesis.compat

import org.apache.spark.sql.connector.read.streaming.ReadLimit

/**
 * A read limit in bytes. Spark 3.5 has none (Spark 4 added `ReadMaxBytes`), so on this line it is the connector's own,
 * which Spark hands back to the source as it does any other; the 2.13 twin of this file uses Spark's.
 */
object BytesReadLimit {
  private final case class MaxBytes(maxBytes: Long) extends ReadLimit

  def apply(maxBytes: Long): ReadLimit = MaxBytes(maxBytes)

  def unapply(limit: ReadLimit): Option[Long] = limit match {
    case MaxBytes(bytes) => Some(bytes)
    case _ => None
  }
}
