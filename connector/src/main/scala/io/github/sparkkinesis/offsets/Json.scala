package io.github.sparkkinesis.offsets

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

/** Reading and writing the connector's persisted JSON: compact, with object keys in sorted order. */
private[sparkkinesis] object Json {
  private val mapper = new ObjectMapper()

  def obj(fields: (String, JsonNode)*): ObjectNode = {
    val node = mapper.createObjectNode()
    fields.sortBy(_._1).foreach { case (k, v) => node.set[JsonNode](k, v) }
    node
  }

  def text(value: String): JsonNode = mapper.getNodeFactory.textNode(value)

  def number(value: Long): JsonNode = mapper.getNodeFactory.numberNode(value)

  def bool(value: Boolean): JsonNode = mapper.getNodeFactory.booleanNode(value)

  def array(values: Seq[String]): JsonNode = {
    val node = mapper.createArrayNode()
    values.foreach(v => node.add(v))
    node
  }

  def arrayOf(values: Seq[JsonNode]): JsonNode = {
    val node = mapper.createArrayNode()
    values.foreach(v => node.add(v))
    node
  }

  def write(node: JsonNode): String = mapper.writeValueAsString(node)

  /** Parses `raw`, failing with a message that says what was being read. */
  def read(raw: String, what: String): JsonNode =
    try mapper.readTree(raw)
    catch {
      case e: com.fasterxml.jackson.core.JsonProcessingException =>
        throw new IllegalArgumentException(s"Cannot read $what: it is not valid JSON (${e.getOriginalMessage})", e)
    }

  def field(node: JsonNode, name: String, what: String): JsonNode = {
    val value = node.get(name)
    if (value == null || value.isNull)
      throw new IllegalArgumentException(s"Cannot read $what: field '$name' is missing")
    value
  }

  /** A number field that may be absent (fields added by a later format version). */
  def optionalLong(node: JsonNode, name: String): Option[Long] =
    Option(node.get(name)).filterNot(_.isNull).map(_.asLong())

  def fields(node: JsonNode): Seq[(String, JsonNode)] = {
    val it = node.fields()
    val out = Seq.newBuilder[(String, JsonNode)]
    while (it.hasNext) { val e = it.next(); out += e.getKey -> e.getValue }
    out.result()
  }

  def strings(node: JsonNode): Seq[String] = {
    val out = Seq.newBuilder[String]
    val it = node.elements()
    while (it.hasNext) out += it.next().asText()
    out.result()
  }

  /** Checks the `version` field of a persisted document; newer versions are refused with a clear message. */
  def checkVersion(node: JsonNode, supported: Int, what: String): Int = {
    val version = field(node, "version", what).asInt(-1)
    if (version < 1 || version > supported) {
      throw new IllegalStateException(
        s"Cannot read $what: format version $version is not supported by this connector (it reads versions 1 " +
          s"to $supported). It was probably written by a newer spark-kinesis; run that version or a newer one.")
    }
    version
  }
}
