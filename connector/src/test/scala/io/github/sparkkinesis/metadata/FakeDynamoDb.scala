package io.github.sparkkinesis.metadata

import java.net.URI

import scala.collection.mutable

import io.github.sparkkinesis.compat.JavaCollections._

import software.amazon.awssdk.services.dynamodb.DynamoDbClient
import software.amazon.awssdk.services.dynamodb.model._
import software.amazon.awssdk.services.dynamodb.waiters.DynamoDbWaiter

import io.github.sparkkinesis.client.ClientSettings

/**
 * One in-memory DynamoDB table with the metadata store's key schema, answering the calls the store makes as DynamoDB
 * does: conditional puts, consistent reads, key-condition queries in pages of `pageSize` (sort keys in order), batch
 * writes, TTL settings. DynamoDB Local runs the same store in the integration tests; this one lets unit tests look at
 * every item and call.
 */
final class FakeDynamoDb(pageSize: Int = 3) extends DynamoDbClient {
  import DynamoDbShardEndStore.{PartitionKey, SortKey}

  private val partitions = mutable.Map.empty[String, java.util.TreeMap[String, Map[String, AttributeValue]]]
  @volatile var tableExists = false
  @volatile var ttlAttribute: Option[String] = None
  val calls: mutable.Buffer[String] = mutable.Buffer.empty

  override def serviceName(): String = "dynamodb"

  override def close(): Unit = ()

  /** Every item's sort key under partition key `pk`, in key order. */
  def sortKeys(pk: String): Seq[String] = synchronized(partitions.get(pk).toSeq.flatMap(_.keySet.asScala))

  /** Every item, as (partition key, sort key) -> attributes. */
  def items: Map[(String, String), Map[String, AttributeValue]] = synchronized {
    partitions.toSeq.flatMap { case (pk, sks) => sks.asScala.map { case (sk, item) => (pk, sk) -> item } }.toMap
  }

  private def call(name: String): Unit = synchronized(calls += name)

  private def keyOf(key: java.util.Map[String, AttributeValue]): (String, String) =
    (key.get(PartitionKey).s, key.get(SortKey).s)

  private def partition(pk: String) = partitions.getOrElseUpdate(pk, new java.util.TreeMap())

  override def describeTable(request: DescribeTableRequest): DescribeTableResponse = {
    call("DescribeTable")
    if (!tableExists) throw ResourceNotFoundException.builder().message(s"Table ${request.tableName} not found").build()
    DescribeTableResponse.builder().table(TableDescription.builder().tableName(request.tableName)
      .tableStatus(TableStatus.ACTIVE)
      .keySchema(
        KeySchemaElement.builder().attributeName(PartitionKey).keyType(KeyType.HASH).build(),
        KeySchemaElement.builder().attributeName(SortKey).keyType(KeyType.RANGE).build()).build()).build()
  }

  override def createTable(request: CreateTableRequest): CreateTableResponse = {
    call("CreateTable")
    tableExists = true
    CreateTableResponse.builder().build()
  }

  override def updateTimeToLive(request: UpdateTimeToLiveRequest): UpdateTimeToLiveResponse = {
    call("UpdateTimeToLive")
    ttlAttribute =
      Some(request.timeToLiveSpecification.attributeName).filter(_ => request.timeToLiveSpecification.enabled)
    UpdateTimeToLiveResponse.builder().build()
  }

  override def waiter(): DynamoDbWaiter = DynamoDbWaiter.builder().client(this).build()

  override def getItem(request: GetItemRequest): GetItemResponse = synchronized {
    call("GetItem")
    val (pk, sk) = keyOf(request.key)
    GetItemResponse.builder().item(Option(partition(pk).get(sk)).map(_.asJava).orNull).build()
  }

  override def putItem(request: PutItemRequest): PutItemResponse = synchronized {
    call("PutItem")
    val (pk, sk) = keyOf(request.item)
    if (request.conditionExpression == "attribute_not_exists(#sk)" && partition(pk).containsKey(sk)) {
      throw ConditionalCheckFailedException.builder().message("The conditional request failed").build()
    }
    partition(pk).put(sk, request.item.asScala.toMap)
    PutItemResponse.builder().build()
  }

  override def batchGetItem(request: BatchGetItemRequest): BatchGetItemResponse = synchronized {
    call("BatchGetItem")
    val found = request.requestItems.asScala.map { case (table, keys) =>
      table -> keys.keys.asScala.flatMap { key =>
        val (pk, sk) = keyOf(key)
        Option(partition(pk).get(sk)).map(_.asJava)
      }.asJava
    }
    BatchGetItemResponse.builder().responses(found.asJava).build()
  }

  override def batchWriteItem(request: BatchWriteItemRequest): BatchWriteItemResponse = synchronized {
    call("BatchWriteItem")
    request.requestItems.asScala.values.foreach(_.asScala.foreach { write =>
      val (pk, sk) = keyOf(write.deleteRequest.key)
      partition(pk).remove(sk)
    })
    BatchWriteItemResponse.builder().build()
  }

  /** The store's key conditions: `#pk = :pk`, with `#sk < :upto` or `#sk BETWEEN :from AND :upto` or nothing. */
  override def query(request: QueryRequest): QueryResponse = synchronized {
    call("Query")
    val values = request.expressionAttributeValues.asScala.map { case (k, v) => k -> v.s }
    val condition = request.keyConditionExpression
    val selected: String => Boolean =
      if (condition.contains("BETWEEN")) sk => sk >= values(":from") && sk <= values(":upto")
      else if (condition.contains("<")) sk => sk < values(":upto")
      else _ => true
    val pk = values(":pk")
    val after = Option(request.exclusiveStartKey).filterNot(_.isEmpty).map(keyOf(_)._2)
    val keys = after.fold(partition(pk).keySet.asScala.toVector)(sk =>
      partition(pk).tailMap(sk, false).keySet.asScala
        .toVector).filter(selected)
    val page = keys.take(pageSize)
    val builder = QueryResponse.builder().items(page.map(sk =>
      Map(PartitionKey -> AttributeValue.builder().s(pk).build(), SortKey -> AttributeValue.builder().s(sk).build())
        .asJava).asJava)
    if (keys.size > pageSize) {
      builder.lastEvaluatedKey(Map(
        PartitionKey -> AttributeValue.builder().s(pk).build(),
        SortKey -> AttributeValue.builder().s(page.last).build()).asJava)
    }
    builder.build()
  }
}

/** Lends the store `fake` whatever its settings: the store's way to its client, in tests. */
final class FakeDynamoDbAccess(@transient val fake: FakeDynamoDb) extends DynamoDbAccess {
  override def use[T](settings: ClientSettings, endpoint: Option[URI])(call: DynamoDbClient => T): T = call(fake)
}
