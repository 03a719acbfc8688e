package io.github.sparkkinesis.sink

import java.math.BigInteger
import java.nio.charset.StandardCharsets.UTF_8
import java.util.Locale

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{BinaryType, DataType, StringType, StructType}

/** One row, ready for the producer. */
private[sink] final case class OutgoingRecord(
    stream: String,
    partitionKey: String,
    explicitHashKey: Option[String],
    data: Array[Byte]) {

  /**
   * The bytes Kinesis counts against its record limit: partition key (UTF-8) and data; computed once, as the writer and
   * the producers each ask for it.
   */
  val size: Long = partitionKey.getBytes(UTF_8).length.toLong + data.length
}

/**
 * Where the sink's columns are in the rows it is given: `data` (string or binary) and `partitionKey` (string) are
 * required, `explicitHashKey` and `streamName` (strings) optional; other columns are ignored. Built on the driver from
 * the query's schema by [[SinkColumns.resolve]], so a wrong column fails before any task runs.
 *
 * @param optionStream
 *   option `kinesis.streamName`: when set, every row goes there and the `streamName` column is ignored (as the Kafka
 *   sink's `topic` option overrides its `topic` column)
 */
private[sink] final case class SinkColumns(
    data: Int,
    dataIsBinary: Boolean,
    partitionKey: Int,
    explicitHashKey: Option[Int],
    streamName: Option[Int],
    optionStream: Option[String]) {
  import SinkColumns._

  /** The row as a record; fails naming the column when a value cannot be written to Kinesis. */
  def extract(row: InternalRow): OutgoingRecord = {
    if (row.isNullAt(data)) throw badRow(s"column '$Data' is null; filter such rows out or give them a value")
    val bytes = if (dataIsBinary) row.getBinary(data) else row.getUTF8String(data).getBytes
    if (row.isNullAt(partitionKey)) throw badRow(s"column '$PartitionKey' is null; every row needs a partition key")
    val keyUtf8 = row.getUTF8String(partitionKey)
    val key = keyUtf8.toString
    if (key.isEmpty || key.length > MaxPartitionKeyChars) {
      throw badRow(s"column '$PartitionKey' is ${key.length} characters long; Kinesis accepts 1 to " +
        s"$MaxPartitionKeyChars")
    }
    if (bytes.length.toLong + keyUtf8.numBytes > MaxRecordBytes) {
      throw badRow(s"column '$Data' holds ${bytes.length} bytes and '$PartitionKey' ${keyUtf8.numBytes}; no " +
        s"Kinesis stream accepts more than $MaxRecordBytes per record, the two together (a stream takes 1 MiB " +
        "unless its limit was raised)")
    }
    val hashKey = explicitHashKey.filterNot(row.isNullAt).map(i => row.getUTF8String(i).toString)
    hashKey.foreach(checkHashKey)
    val stream = optionStream
      .orElse(streamName.filterNot(row.isNullAt).map(i => row.getUTF8String(i).toString))
      .getOrElse(throw badRow(s"column '$StreamName' is null and option kinesis.streamName is not set; give " +
        "every row a stream name, or set the option to write every row to one stream"))
    OutgoingRecord(stream, key, hashKey, bytes)
  }

  private def checkHashKey(hashKey: String): Unit = {
    val valid = hashKey.nonEmpty && hashKey.length <= 39 && hashKey.forall(Character.isDigit) &&
      new BigInteger(hashKey).bitLength <= 128
    if (!valid) {
      throw badRow(s"column '$ExplicitHashKey' is '$hashKey', which is not a decimal number from 0 to 2^128-1")
    }
  }

  private def badRow(problem: String) = new IllegalArgumentException(s"Cannot write a row to Kinesis: $problem.")
}

private[sink] object SinkColumns {
  val Data = "data"
  val PartitionKey = "partitionKey"
  val ExplicitHashKey = "explicitHashKey"
  val StreamName = "streamName"

  /** The largest record any stream takes (its own limit, `MaxRecordSizeInKiB`, may be lower: see the writer). */
  val MaxRecordBytes: Int = 10 * 1024 * 1024
  val MaxPartitionKeyChars = 256

  /**
   * Finds the sink's columns in `schema` (names compared case-insensitively, like Spark's analyzer by default). With
   * `optionStream` set, the `streamName` column is not looked at, so a DataFrame read from another stream can be
   * written as it is.
   */
  def resolve(schema: StructType, optionStream: Option[String]): SinkColumns = {
    val byName = schema.fields.zipWithIndex.groupBy(_._1.name.toLowerCase(Locale.ROOT))
    def find(name: String, types: Seq[DataType]): Option[Int] = byName.get(name.toLowerCase(Locale.ROOT)).map {
      case Array((field, index)) if types.contains(field.dataType) => index
      case Array((field, _)) =>
        throw new IllegalArgumentException(s"Column '${field.name}' of the DataFrame written to Kinesis has type " +
          s"${field.dataType.simpleString}; it must be ${types.map(_.simpleString).mkString(" or ")}. " +
          s"Cast it, for example with col('${field.name}').cast('${types.head.simpleString}').")
      case several =>
        throw new IllegalArgumentException(s"The DataFrame written to Kinesis has ${several.length} columns named " +
          s"'$name' (${several.map(_._1.name).mkString(", ")}); keep one.")
    }
    def required(name: String, types: Seq[DataType], what: String): Int = find(name, types).getOrElse(
      throw new IllegalArgumentException(s"The DataFrame written to Kinesis has no '$name' column ($what). Its " +
        s"columns are: ${schema.fieldNames.mkString(", ")}. Add or rename one, for example with " +
        s".withColumnRenamed('payload', '$name')."))

    val data = required(Data, Seq(StringType, BinaryType), "the record's payload, string or binary")
    val partitionKey = required(PartitionKey, Seq(StringType), "a string that picks the shard")
    val streamName = if (optionStream.isDefined) None else find(StreamName, Seq(StringType))
    if (streamName.isEmpty && optionStream.isEmpty) {
      throw new IllegalArgumentException("The sink needs to know which stream to write to: set option " +
        s"kinesis.streamName, or add a string column '$StreamName' naming each row's stream.")
    }
    SinkColumns(
      data,
      schema.fields(data).dataType == BinaryType,
      partitionKey,
      find(ExplicitHashKey, Seq(StringType)),
      streamName,
      optionStream)
  }
}
