package io.github.sparkkinesis.payloads

import java.net.URI
import java.util.UUID

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import io.github.sparkkinesis.client.ClientSettings

/** One schema version as the registry holds it; versions never change once registered. */
final case class SchemaVersion(id: UUID, definition: String, dataFormat: String)

/** Where the registry is: the connector's region, credentials and retries, and `kinesis.glue.endpointUrl`. */
final case class GlueTarget(settings: ClientSettings, endpoint: Option[URI]) extends Serializable

/** The registry's version was not found: it never will be (ids are assigned by the registry and never reused). */
final class SchemaVersionNotFound(message: String) extends RuntimeException(message)

/** The Glue Schema Registry calls the payload functions make, on the registry of `target`. */
private[sparkkinesis] final class GlueSchemaRegistry(target: GlueTarget) {
  import GlueSchemaRegistry._

  /** The version `id`; fails with [[SchemaVersionNotFound]] when the registry has none. */
  def version(id: UUID): SchemaVersion = {
    val found =
      try call("GetSchemaVersion", s"version $id", request().put("SchemaVersionId", id.toString))
      catch {
        case e: GlueCallFailed if e.errorCode == NotFound =>
          throw new SchemaVersionNotFound(s"schema version $id is not in the Glue Schema Registry: ${e.getMessage}")
      }
    SchemaVersion(id, found.path("SchemaDefinition").asText, found.path("DataFormat").asText)
  }

  /** The latest version of `schema` in `registry`. */
  def latest(registry: String, schema: String): SchemaVersion = {
    val body = request()
    body.set[JsonNode]("SchemaId", schemaId(registry, schema))
    body.putObject("SchemaVersionNumber").put("LatestVersion", true)
    val found = call("GetSchemaVersion", s"the latest version of schema '$schema' in registry '$registry'", body)
    SchemaVersion(
      UUID.fromString(found.path("SchemaVersionId").asText),
      found.path("SchemaDefinition").asText,
      found.path("DataFormat").asText)
  }

  /** The id of the version of `schema` whose definition is `definition`, if registered. */
  def versionOf(registry: String, schema: String, definition: String): Option[UUID] = {
    val body = request().put("SchemaDefinition", definition)
    body.set[JsonNode]("SchemaId", schemaId(registry, schema))
    try Some(UUID.fromString(call("GetSchemaByDefinition", s"schema '$schema' in registry '$registry'", body)
        .path("SchemaVersionId").asText))
    catch { case e: GlueCallFailed if e.errorCode == NotFound => None }
  }

  /** Registers `definition` as a version of `schema` (created, with `dataFormat`, when missing); its id. */
  def register(registry: String, schema: String, definition: String, dataFormat: String): UUID = {
    val what = s"schema '$schema' in registry '$registry'"
    val body = request().put("SchemaDefinition", definition)
    body.set[JsonNode]("SchemaId", schemaId(registry, schema))
    val registered =
      try call("RegisterSchemaVersion", what, body)
      catch {
        case e: GlueCallFailed if e.errorCode == NotFound =>
          // BACKWARD: what Glue applies when none is named (said, since some registries insist on one).
          val create = request().put("SchemaName", schema).put("DataFormat", dataFormat)
            .put("Compatibility", "BACKWARD").put("SchemaDefinition", definition)
          create.putObject("RegistryId").put("RegistryName", registry)
          call("CreateSchema", what, create)
      }
    UUID.fromString(registered.path("SchemaVersionId").asText)
  }

  private def where: String = target.endpoint.fold("")(e => s" at $e")

  /** Glue's answer; a failure says which call of what failed, and where. */
  private def call(operation: String, what: String, body: ObjectNode): JsonNode =
    try GlueHttp.use(target)(_.call(operation, body))
    catch {
      case e: GlueCallFailed =>
        throw new GlueCallFailed(e.status, e.errorCode, s"Glue $operation of $what failed$where: ${e.getMessage}")
      case NonFatal(e) =>
        throw new IllegalStateException(s"Glue $operation of $what failed$where: ${e.getMessage}", e)
    }
}

private[sparkkinesis] object GlueSchemaRegistry {
  private val NotFound = "EntityNotFoundException"

  private def request(): ObjectNode = GlueHttp.Json.createObjectNode()

  private def schemaId(registry: String, schema: String): ObjectNode =
    request().put("RegistryName", registry).put("SchemaName", schema)
}
