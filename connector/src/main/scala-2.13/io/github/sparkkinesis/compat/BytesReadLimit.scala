package io.github.sparkkinesis.compat

import org.apache.spark.sql.connector.read.streaming.{ReadLimit, ReadMaxBytes}

/** A read limit in bytes: Spark's `ReadMaxBytes` (Spark 4; the 2.12 twin of this file has one of its own for 3.5). */
object BytesReadLimit {
  def apply(maxBytes: Long): ReadLimit = ReadLimit.maxBytes(maxBytes)

  def unapply(limit: ReadLimit): Option[Long] = limit match {
    case bytes: ReadMaxBytes => Some(bytes.maxBytes)
    case _ => None
  }
}
