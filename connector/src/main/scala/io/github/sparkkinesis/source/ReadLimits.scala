package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.read.streaming.{CompositeReadLimit, ReadLimit, ReadMaxRows}

/** The record cap a Spark read limit sets, if any (the smallest of a composite's). */
private[source] object ReadLimits {
  def maxRecords(limit: ReadLimit): Option[Long] = limit match {
    case rows: ReadMaxRows => Some(rows.maxRows)
    case composite: CompositeReadLimit =>
      val caps = composite.getReadLimits.toSeq.flatMap(maxRecords)
      if (caps.isEmpty) None else Some(caps.min)
    case _ => None
  }
}
