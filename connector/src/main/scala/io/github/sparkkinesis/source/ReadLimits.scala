package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.read.streaming.{CompositeReadLimit, ReadLimit, ReadMaxRows}

import io.github.sparkkinesis.compat.BytesReadLimit

/**
 * The caps of a Spark read limit: records and bytes, each the smallest a composite limit holds, as the Kafka source
 * composes its limits (the batch stops at whichever is reached first).
 */
private[source] object ReadLimits {

  /** The source's default limit: `kinesis.maxRecordsPerTrigger` and `kinesis.maxBytesPerTrigger`, whichever are set. */
  def default(maxRecords: Option[Long], maxBytes: Option[Long]): ReadLimit =
    maxRecords.map(ReadLimit.maxRows).toSeq ++ maxBytes.map(BytesReadLimit(_)) match {
      case Seq() => ReadLimit.allAvailable()
      case Seq(one) => one
      case both => ReadLimit.compositeLimit(both.toArray)
    }

  def maxRecords(limit: ReadLimit): Option[Long] = smallest(limit) {
    case rows: ReadMaxRows => rows.maxRows
  }

  def maxBytes(limit: ReadLimit): Option[Long] = smallest(limit) {
    case BytesReadLimit(bytes) => bytes
  }

  private def smallest(limit: ReadLimit)(cap: PartialFunction[ReadLimit, Long]): Option[Long] = limit match {
    case composite: CompositeReadLimit =>
      val caps = composite.getReadLimits.toSeq.flatMap(smallest(_)(cap))
      if (caps.isEmpty) None else Some(caps.min)
    case other => cap.lift(other)
  }
}
