package io.github.sparkkinesis.it

import com.amazonaws.kinesis.agg.{AggRecord, RecordAggregator}

/** One KPL aggregate ready to put: its bytes, the key it is put under, and the user records inside it. */
final case class KplAggregate(
    partitionKey: String,
    explicitHashKey: String,
    bytes: Array[Byte],
    userRecords: Seq[(String, Array[Byte])])

/**
 * KPL-format aggregates built with the awslabs aggregator (`com.amazonaws.kinesis.agg.RecordAggregator`), so the tests
 * read records in the format real producers write rather than in one we made up.
 */
object KplAggregates {

  /** The four bytes every KPL aggregate starts with. */
  val MagicBytes: Array[Byte] = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)

  /** Packs the user records in order, starting a new aggregate whenever the current one is full (1 MB). */
  def build(userRecords: Seq[(String, Array[Byte])]): Seq[KplAggregate] = {
    val aggregator = new RecordAggregator()
    val done = Seq.newBuilder[KplAggregate]
    var inCurrent = Vector.empty[(String, Array[Byte])]
    userRecords.foreach { case record @ (key, data) =>
      // addUserRecord hands back the full aggregate, without this record, when this record does not fit.
      val full = AggregatorCalls.addUserRecord(aggregator, key, data)
      if (full != null) {
        done += toAggregate(full, inCurrent)
        inCurrent = Vector.empty
      }
      inCurrent :+= record
    }
    if (aggregator.getNumUserRecords > 0) done += toAggregate(aggregator.clearAndGet(), inCurrent)
    done.result()
  }

  private def toAggregate(record: AggRecord, userRecords: Seq[(String, Array[Byte])]): KplAggregate = {
    require(
      record.getNumUserRecords == userRecords.size,
      s"the aggregator holds ${record.getNumUserRecords} user records where ${userRecords.size} were expected")
    KplAggregate(record.getPartitionKey, record.getExplicitHashKey, record.toRecordBytes, userRecords)
  }
}
