package io.github.sparkkinesis.payloads

import java.io.InputStream

import com.fasterxml.jackson.core.{JsonFactory, JsonParser, JsonToken}
import org.apache.spark.unsafe.types.UTF8String

/**
 * Strict reading of a JSON document with Jackson's streaming parser: the payload functions walk the tokens once,
 * building Spark's internal values directly, and a value of the wrong JSON type is a [[PayloadError]] naming the field.
 */
private[payloads] object JsonReading {
  private[payloads] val factory = new JsonFactory()

  def parser(bytes: Array[Byte]): JsonParser = factory.createParser(bytes)
  def parser(bytes: Array[Byte], offset: Int): JsonParser = factory.createParser(bytes, offset, bytes.length - offset)
  def parser(in: InputStream): JsonParser = factory.createParser(in)

  /** Reads the document `p` holds with `body` (called on its first token), then checks nothing follows it. */
  def document[T](p: JsonParser, what: String)(body: JsonParser => T): T =
    try {
      if (p.nextToken() == null) PayloadError(s"the record is empty, not $what")
      val value = body(p)
      if (p.nextToken() != null) PayloadError(s"the record has more after $what")
      value
    } finally p.close()

  /** Calls `field` with each field's name, the parser on the field's value; `p` is on the object's START_OBJECT. */
  def fields(p: JsonParser, what: String)(field: String => Unit): Unit = {
    if (p.currentToken() != JsonToken.START_OBJECT) PayloadError(s"$what is not a JSON object")
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      val name = p.currentName()
      p.nextToken()
      field(name)
    }
  }

  /** Skips the value `p` is on (a whole object or array). */
  def skip(p: JsonParser): Unit = p.skipChildren()

  /** The string `p` is on, or null for JSON null. */
  def string(p: JsonParser, what: String): UTF8String = p.currentToken() match {
    case JsonToken.VALUE_STRING => UTF8String.fromString(p.getText)
    case JsonToken.VALUE_NULL => null
    case other => PayloadError(s"$what is $other, not a string")
  }

  /** The integer `p` is on. */
  def long(p: JsonParser, what: String): Long = p.currentToken() match {
    case JsonToken.VALUE_NUMBER_INT
        if p.getNumberType == JsonParser.NumberType.INT ||
          p.getNumberType == JsonParser.NumberType.LONG =>
      p.getLongValue
    case other => PayloadError(s"$what is ${describe(p, other)}, not a 64-bit integer")
  }

  /** Calls `element` for each element of the array `p` is on (with `p` on the element); JSON null is no elements. */
  def elements(p: JsonParser, what: String)(element: => Unit): Unit = p.currentToken() match {
    case JsonToken.START_ARRAY => while (p.nextToken() != JsonToken.END_ARRAY) element
    case JsonToken.VALUE_NULL =>
    case other => PayloadError(s"$what is $other, not an array")
  }

  /** The value `p` is on (token `token`), for a message: a number's or string's text, or the token's kind. */
  def describe(p: JsonParser, token: JsonToken): String = token match {
    case JsonToken.VALUE_NUMBER_INT | JsonToken.VALUE_NUMBER_FLOAT => p.getText
    case JsonToken.VALUE_STRING => s"the string '${p.getText}'"
    case other => other.toString
  }
}
