package io.github.sparkkinesis.it

import java.util.UUID

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** moto's Glue Schema Registry, set up through Glue's JSON API as an operator's scripts would (tests, bench). */
object MotoGlue {
  private val mapper = new ObjectMapper()

  /** moto's answer to Glue `operation` with `body`; fails when it answers an error. */
  def call(operation: String, body: String): JsonNode = {
    val (status, answer) = CloudWatchCborShim.callMoto(
      Moto.endpoint,
      s"AWSGlue.$operation",
      body,
      Some(s"AWS4-HMAC-SHA256 Credential=test/20260101/${TestStreams.Region}/glue/aws4_request, " +
        "SignedHeaders=host, Signature=0"))
    if (status != 200) throw new IllegalStateException(s"moto's Glue $operation answered $status: $answer")
    mapper.readTree(answer)
  }

  def createRegistry(registry: String): Unit = call("CreateRegistry", s"""{"RegistryName": "$registry"}""")

  /**
   * Creates schema `schema` of `dataFormat` (AVRO unless named; JSON, PROTOBUF) in `registry` (no compatibility checks)
   * with `definition`; the first version's id.
   */
  def createSchema(registry: String, schema: String, definition: String, dataFormat: String = "AVRO"): UUID = id(call(
    "CreateSchema",
    s"""{"RegistryId": {"RegistryName": "$registry"}, "SchemaName": "$schema", "DataFormat": "$dataFormat",
       |"Compatibility": "NONE", "SchemaDefinition": ${json(definition)}}""".stripMargin))

  /** Registers `definition` as the next version of `schema`; its id. */
  def registerVersion(registry: String, schema: String, definition: String): UUID = id(call(
    "RegisterSchemaVersion",
    s"""{"SchemaId": {"RegistryName": "$registry", "SchemaName": "$schema"},
       |"SchemaDefinition": ${json(definition)}}""".stripMargin))

  /** Options that point the payload functions at moto's registry with the tests' region and credentials. */
  def functionOptions: Map[String, String] = Map(
    "kinesis.region" -> TestStreams.Region,
    "kinesis.awsAccessKeyId" -> TestStreams.AccessKeyId,
    "kinesis.awsSecretKey" -> TestStreams.SecretKey,
    "kinesis.glue.endpointUrl" -> Moto.endpoint)

  private def json(text: String): String = mapper.writeValueAsString(text)

  private def id(answer: JsonNode): UUID = UUID.fromString(answer.path("SchemaVersionId").asText)
}
