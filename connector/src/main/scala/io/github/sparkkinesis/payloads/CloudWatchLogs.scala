package io.github.sparkkinesis.payloads

import java.io.ByteArrayInputStream
import java.util.zip.GZIPInputStream

import scala.collection.mutable.ArrayBuffer

import com.fasterxml.jackson.core.JsonParser
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * A CloudWatch Logs subscription record (gzip-compressed JSON, as a subscription filter delivers it, or the JSON
 * already decompressed, as Firehose's decompression leaves it) as a [[CloudWatchLogs.schema]] row. Fields AWS may add
 * are skipped; a known field of the wrong JSON type, a messageType other than DATA_MESSAGE or CONTROL_MESSAGE, or bytes
 * that are neither gzip nor JSON make the record malformed.
 */
case class CloudWatchLogs(child: Expression, mode: PayloadMode) extends PayloadExpression {
  import CloudWatchLogs._

  override def dataType: DataType = schema
  override def prettyName: String = "cloudwatch_logs"

  override protected def decode(bytes: Array[Byte]): Any = {
    val parser =
      if (Codec.isGzip(bytes)) JsonReading.parser(new GZIPInputStream(new ByteArrayInputStream(bytes), 8192))
      else if (looksLikeJson(bytes)) JsonReading.parser(bytes)
      else PayloadError(s"the record is neither gzip-compressed (it starts with ${hexPrefix(bytes)}) nor JSON")
    JsonReading.document(parser, "a CloudWatch Logs subscription message")(message)
  }

  override protected def malformed(reason: String): Any = {
    val row = new GenericInternalRow(schema.length)
    row.update(ErrorField, UTF8String.fromString(reason))
    row
  }

  override protected def withNewChildInternal(newChild: Expression): CloudWatchLogs = copy(child = newChild)
}

object CloudWatchLogs {
  private val event = StructType(Seq(
    StructField("id", StringType),
    StructField("timestamp", TimestampType),
    StructField("message", StringType)))

  /** The decoded record: the message's fields as AWS names them, then `error` (null unless the record is malformed). */
  val schema: StructType = StructType(Seq(
    StructField("messageType", StringType),
    StructField("owner", StringType),
    StructField("logGroup", StringType),
    StructField("logStream", StringType),
    StructField("subscriptionFilters", ArrayType(StringType)),
    StructField("logEvents", ArrayType(event)),
    StructField("error", StringType)))

  private val ErrorField = schema.fieldIndex("error")
  private val MessageTypes = Set("DATA_MESSAGE", "CONTROL_MESSAGE").map(UTF8String.fromString)

  private def looksLikeJson(bytes: Array[Byte]): Boolean = {
    val first = bytes.find(b => !Character.isWhitespace(b.toChar))
    first.contains('{'.toByte) || first.contains('['.toByte)
  }

  private def hexPrefix(bytes: Array[Byte]): String =
    if (bytes.isEmpty) "nothing" else bytes.take(4).map(b => f"${b & 0xff}%02x").mkString("bytes ", " ", "")

  private def message(p: JsonParser): InternalRow = {
    val row = new GenericInternalRow(schema.length)
    JsonReading.fields(p, "the message") {
      case "messageType" => row.update(0, JsonReading.string(p, "messageType"))
      case "owner" => row.update(1, JsonReading.string(p, "owner"))
      case "logGroup" => row.update(2, JsonReading.string(p, "logGroup"))
      case "logStream" => row.update(3, JsonReading.string(p, "logStream"))
      case "subscriptionFilters" =>
        val filters = ArrayBuffer.empty[Any]
        JsonReading.elements(p, "subscriptionFilters")(filters += JsonReading.string(p, "a subscription filter"))
        row.update(4, new GenericArrayData(filters.toArray))
      case "logEvents" =>
        val events = ArrayBuffer.empty[Any]
        JsonReading.elements(p, "logEvents")(events += logEvent(p))
        row.update(5, new GenericArrayData(events.toArray))
      case _ => JsonReading.skip(p)
    }
    val messageType = row.getUTF8String(0)
    if (!MessageTypes.contains(messageType))
      PayloadError(s"messageType is ${Option(messageType).fold("missing")(t => s"'$t'")}, not DATA_MESSAGE or " +
        "CONTROL_MESSAGE: this is not a CloudWatch Logs subscription message")
    row
  }

  private def logEvent(p: JsonParser): InternalRow = {
    val row = new GenericInternalRow(3)
    JsonReading.fields(p, "a log event") {
      case "id" => row.update(0, JsonReading.string(p, "a log event's id"))
      case "timestamp" => row.update(1, Math.multiplyExact(JsonReading.long(p, "a log event's timestamp"), 1000L))
      case "message" => row.update(2, JsonReading.string(p, "a log event's message"))
      case _ => JsonReading.skip(p)
    }
    row
  }
}
