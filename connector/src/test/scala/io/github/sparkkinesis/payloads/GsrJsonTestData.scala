package io.github.sparkkinesis.payloads

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

/** Two versions of an order JSON Schema, for the GSR JSON tests. */
object GsrJsonTestData {

  /** Version 1: id, amount (integer), note (string or null). */
  val V1: String =
    """{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
      |"properties": {"id": {"type": "string"}, "amount": {"type": "integer"}, "note": {"type": ["string", "null"]}},
      |"required": ["id", "amount"]}""".stripMargin

  /**
   * Version 2: drops note, makes amount a number (through a $ref), adds currency, the time it was placed and its lines.
   */
  val V2: String =
    """{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
      |"definitions": {"money": {"type": "number"},
      |  "line": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}},
      |"properties": {"id": {"type": "string"}, "amount": {"$ref": "#/definitions/money"},
      |  "currency": {"type": "string", "enum": ["EUR", "USD"]},
      |  "placed": {"type": "string", "format": "date-time"},
      |  "lines": {"type": "array", "items": {"$ref": "#/definitions/line"}}},
      |"required": ["id"]}""".stripMargin

  val V1Id: UUID = UUID.fromString("3c1e0a52-7c1d-4d7e-9a55-1c2b3d4e5f60")
  val V2Id: UUID = UUID.fromString("7d2e1b63-4f50-4a6b-8c7d-0e1f2a3b4c5d")

  val Version1: SchemaVersion = SchemaVersion(V1Id, V1, "JSON")
  val Version2: SchemaVersion = SchemaVersion(V2Id, V2, "JSON")

  def json(text: String): Array[Byte] = text.getBytes(UTF_8)
}
