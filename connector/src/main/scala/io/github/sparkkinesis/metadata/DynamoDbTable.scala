package io.github.sparkkinesis.metadata

import java.net.URI
import java.time.Duration

import io.github.sparkkinesis.compat.JavaCollections._

import software.amazon.awssdk.core.waiters.WaiterOverrideConfiguration
import software.amazon.awssdk.services.dynamodb.model.{
  AttributeDefinition,
  BillingMode,
  CreateTableRequest,
  DescribeTableRequest,
  KeySchemaElement,
  KeyType,
  ResourceInUseException,
  ResourceNotFoundException,
  ScalarAttributeType,
  TableDescription,
  TimeToLiveSpecification,
  UpdateTimeToLiveRequest
}
import org.slf4j.LoggerFactory

import software.amazon.awssdk.services.dynamodb.DynamoDbClient

import io.github.sparkkinesis.client.ClientSettings

/** The DynamoDB table of the metadata store: `name` at `endpoint` (None: the region's endpoint). */
final case class DynamoDbTable(name: String, endpoint: Option[URI]) {
  import DynamoDbShardEndStore.{ExpiresAttribute, PartitionKey, SortKey}

  /**
   * Uses the table if it exists with the store's key schema, or creates it (on-demand billing, TTL on attribute
   * `expiresAt`) and waits until it is active; two queries creating it at once both end up using it. Fails naming
   * option kinesis.dynamodb.tableName when a table of that name has another key schema.
   */
  def ensure(settings: ClientSettings, access: DynamoDbAccess = DynamoDbClients): Unit =
    access.use(settings, endpoint)(ensure(_, new DynamoDbErrors(this, settings)))

  private def ensure(dynamo: DynamoDbClient, errors: DynamoDbErrors): Unit = {
    val existing =
      try
        Some(errors.call("DescribeTable")(dynamo.describeTable(DescribeTableRequest.builder().tableName(name).build())))
      catch {
        case e: Exception if causedBy[ResourceNotFoundException](e) => None
      }
    existing.map(_.table).foreach(checkKeys)
    val created = existing.isEmpty && (
      try {
        errors.call("CreateTable")(dynamo.createTable(CreateTableRequest.builder().tableName(name)
          .billingMode(BillingMode.PAY_PER_REQUEST)
          .attributeDefinitions(
            AttributeDefinition.builder().attributeName(PartitionKey).attributeType(ScalarAttributeType.S).build(),
            AttributeDefinition.builder().attributeName(SortKey).attributeType(ScalarAttributeType.S).build())
          .keySchema(
            KeySchemaElement.builder().attributeName(PartitionKey).keyType(KeyType.HASH).build(),
            KeySchemaElement.builder().attributeName(SortKey).keyType(KeyType.RANGE).build())
          .build()))
        true
      } catch {
        case e: Exception if causedBy[ResourceInUseException](e) => false // another query created it a moment ago
      })
    // A new table is CREATING for a few seconds; once a second, for at most two minutes.
    errors.call("DescribeTable")(dynamo.waiter().waitUntilTableExists(
      DescribeTableRequest.builder().tableName(name).build(),
      WaiterOverrideConfiguration.builder().maxAttempts(120).waitTimeout(Duration.ofMinutes(2))
        .backoffStrategyV2(software.amazon.awssdk.retries.api.BackoffStrategy.fixedDelay(Duration.ofSeconds(1)))
        .build()))
    if (created) enableTtl(dynamo, errors)
  }

  /**
   * Lets DynamoDB delete items once their `expiresAt` has passed. A failure (say, no dynamodb:UpdateTimeToLive
   * permission) is logged, not fatal: the store is correct without it, forgotten items merely stay.
   */
  private def enableTtl(dynamo: DynamoDbClient, errors: DynamoDbErrors): Unit =
    try errors.call("UpdateTimeToLive")(dynamo.updateTimeToLive(UpdateTimeToLiveRequest.builder().tableName(name)
        .timeToLiveSpecification(
          TimeToLiveSpecification.builder().attributeName(ExpiresAttribute).enabled(true).build())
        .build()))
    catch {
      case scala.util.control.NonFatal(e) => DynamoDbTable.log.warn(s"The metadata store created DynamoDB table " +
          s"$name but could not enable its TTL on attribute $ExpiresAttribute, so items of deleted checkpoints will " +
          s"not expire; enable it on the table yourself. ${e.getMessage}")
    }

  private def checkKeys(table: TableDescription): Unit = {
    val keys = table.keySchema.asScala.map(k => k.attributeName -> k.keyType).toSet
    if (keys != Set(PartitionKey -> KeyType.HASH, SortKey -> KeyType.RANGE)) {
      throw new IllegalArgumentException(s"DynamoDB table $name (option kinesis.dynamodb.tableName) exists with key " +
        s"schema ${table.keySchema.asScala.map(k => s"${k.attributeName} ${k.keyType}").mkString(", ")}, not the " +
        s"metadata store's ($PartitionKey HASH, $SortKey RANGE): name another table, or let the connector create it.")
    }
  }

  private def causedBy[T <: Throwable](e: Throwable)(implicit t: scala.reflect.ClassTag[T]): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).exists(t.runtimeClass.isInstance)
}

private object DynamoDbTable {
  private val log = LoggerFactory.getLogger(classOf[DynamoDbTable])
}
