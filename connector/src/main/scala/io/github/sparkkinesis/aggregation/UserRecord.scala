package io.github.sparkkinesis.aggregation

/**
 * One user record: a plain Kinesis record, or one sub-record of a KPL aggregate.
 *
 * `subSequenceNumber` is the record's position inside its aggregate (0, 1, 2, ...), and 0 for a plain record; together
 * with the Kinesis sequence number it identifies a user record. `data` is compared by reference, as in any case class
 * holding an array: compare payloads with `java.util.Arrays.equals`.
 */
final case class UserRecord(
    data: Array[Byte],
    partitionKey: String,
    explicitHashKey: Option[String],
    subSequenceNumber: Long)
