package io.github.sparkkinesis.it

import java.io.ByteArrayOutputStream

/**
 * Glue Schema Registry Protobuf payloads encoded by hand from the documented layouts (the tests and benchmarks see
 * protobuf only relocated, inside the connector's JAR): the message index as a varint, then each field as its tag
 * (number and wire type) and value.
 */
object ProtobufWire {

  /** Message `index`'s payload, `fields` by number: strings length-delimited; Int, Long, Boolean varints; Double. */
  def payload(index: Int, fields: (Int, Any)*): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    def varint(value: Long): Unit = {
      var rest = value
      while ((rest & ~0x7fL) != 0) { out.write(((rest & 0x7f) | 0x80).toInt); rest >>>= 7 }
      out.write(rest.toInt)
    }
    varint(index)
    fields.foreach {
      case (number, text: String) =>
        val bytes = text.getBytes("UTF-8")
        varint(number << 3 | 2)
        varint(bytes.length)
        out.write(bytes)
      case (number, value: Long) => varint(number << 3); varint(value)
      case (number, value: Int) => varint(number << 3); varint(value.toLong)
      case (number, value: Boolean) => varint(number << 3); varint(if (value) 1L else 0L)
      case (number, value: Double) =>
        varint(number << 3 | 1)
        val bits = java.lang.Double.doubleToLongBits(value)
        (0 until 8).foreach(i => out.write((bits >>> (8 * i)).toInt & 0xff))
    }
    out.toByteArray
  }
}
