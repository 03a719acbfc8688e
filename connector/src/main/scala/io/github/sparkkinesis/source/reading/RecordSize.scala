package io.github.sparkkinesis.source.reading

/** A shard's average record, by which its pages are sized to their share: data bytes, and rows (KPL aggregates). */
private[source] final case class RecordSize(bytes: Long, rows: Double)

private[source] object RecordSize {

  /**
   * What a reader assumes until its shard's first page says otherwise: Kinesis' default largest record (a stream may
   * allow up to 10 MiB), so a first page stays within its share unless its records are larger still.
   */
  val Unknown: RecordSize = RecordSize(1L << 20, 1.0)

  /** The average of `count` records of `bytes` of data in all, of one row each. */
  def ofRecords(bytes: Long, count: Long): RecordSize = RecordSize(math.max(1L, (bytes + count - 1) / count), 1.0)
}
