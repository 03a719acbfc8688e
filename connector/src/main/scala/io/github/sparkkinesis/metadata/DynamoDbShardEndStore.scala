package io.github.sparkkinesis.metadata

import java.util.concurrent.{Callable, Executors, ThreadFactory}

import io.github.sparkkinesis.compat.JavaCollections._

import software.amazon.awssdk.services.dynamodb.DynamoDbClient
import software.amazon.awssdk.services.dynamodb.model.{
  AttributeValue,
  BatchGetItemRequest,
  BatchWriteItemRequest,
  ConditionalCheckFailedException,
  DeleteRequest,
  GetItemRequest,
  KeysAndAttributes,
  PutItemRequest,
  QueryRequest,
  WriteRequest
}

import io.github.sparkkinesis.client.ClientSettings

/**
 * [[ShardEndStore]] on a DynamoDB table, for checkpoints on object stores: one item per task record, keyed by the query
 * (partition key `queryCheckpoint`, the query's qualified checkpoint location, so several queries share a table) and by
 * the checkpoint's life, batch and task (sort key `batchTask`: `run-<id>/<batch>/<task>` zero-padded, so a key range is
 * a range of batches of one life; a checkpoint started before run identities existed has no `run-<id>/` part). A
 * conditional put (the key must not exist) lets the first attempt win; reads are consistent. Each item carries
 * `expiresAt` (epoch seconds, [[ItemLifetimeMs]] after it was written) for DynamoDB's TTL, so the items of a checkpoint
 * deleted while its query was stopped expire if the path is never used again. Serializable: executors borrow their own
 * client from `settings` ([[DynamoDbClients]]).
 *
 * @param run
 *   the checkpoint's run identity ([[CheckpointRun]]); None for an older checkpoint's items
 */
final class DynamoDbShardEndStore(
    settings: ClientSettings,
    table: DynamoDbTable,
    queryKey: String,
    run: Option[String],
    access: DynamoDbAccess = DynamoDbClients,
    clock: () => Long = () => System.currentTimeMillis())
    extends ShardEndStore {
  import DynamoDbShardEndStore._

  @transient private lazy val errors = new DynamoDbErrors(table, settings)
  private val runPrefix = run.fold("")(id => s"$RunPrefix$id/")

  private def dynamo[T](call: DynamoDbClient => T): T = access.use(settings, table.endpoint)(call)

  override def describe: String =
    s"DynamoDB table ${table.name} (option kinesis.dynamodb.tableName), items with $PartitionKey $queryKey" +
      (if (runPrefix.isEmpty) "" else s" and $SortKey beginning $runPrefix")

  override def foreignRecordsAdvice: String =
    "Each query needs a checkpoint location of its own: queries on one location share its items in the table."

  override def get(batch: Long, task: Int): Option[TaskEndRecord] = errors.call("GetItem") {
    val item = dynamo(_.getItem(GetItemRequest.builder().tableName(table.name).key(key(batch, task).asJava)
      .consistentRead(true).build())).item
    if (item == null || item.isEmpty) None else Some(parse(item))
  }

  /** One BatchGetItem per 100 tasks (DynamoDB's limit), those in parallel; keys left unprocessed are asked again. */
  override def getAll(batch: Long, tasks: Seq[Int]): Map[Int, TaskEndRecord] = {
    val chunks = tasks.distinct.grouped(MaxBatchGet).toVector
    val read: Seq[Int] => Seq[TaskEndRecord] = chunk => errors.call("BatchGetItem")(batchGet(chunk.map(key(batch, _))))
    val records =
      if (chunks.size <= 1) chunks.flatMap(read)
      else chunks.map(c => readers.submit(new Callable[Seq[TaskEndRecord]] { def call() = read(c) })).flatMap(_.get())
    records.map(r => r.task -> r).toMap
  }

  override def recordIfAbsent(record: TaskEndRecord): TaskEndRecord = {
    val written = errors.call("PutItem") {
      try {
        val item = key(record.batch, record.task) + (RecordAttribute -> text(record.toJson)) +
          (ExpiresAttribute -> AttributeValue.builder().n(((clock() + ItemLifetimeMs) / 1000L).toString).build())
        dynamo(_.putItem(PutItemRequest.builder().tableName(table.name).item(item.asJava)
          .conditionExpression("attribute_not_exists(#sk)").expressionAttributeNames(Map("#sk" -> SortKey).asJava)
          .build()))
        true
      } catch {
        case _: ConditionalCheckFailedException => false
      }
    }
    if (written) record
    else get(record.batch, record.task).getOrElse(throw new IllegalStateException(
      s"DynamoDB table ${table.name} refused task ${record.task} of batch ${record.batch} as already recorded, but a " +
        "consistent read finds no such item; check that nothing else deletes the table's items."))
  }

  /**
   * Deletes this life's items of batches below `batch`: a Query over the key range, then deletes 25 at a time. An older
   * checkpoint's keys (no run part, digits first) sort before every `run-` key, so its range holds only them.
   */
  override def purgeBefore(batch: Long): Unit =
    if (runPrefix.isEmpty) deleteWhere("#sk < :upto", Map(":upto" -> text(batchPrefix(batch))))(_ => true)
    else deleteWhere(
      "#sk BETWEEN :from AND :upto",
      Map(":from" -> text(runPrefix), ":upto" -> text(runPrefix + batchPrefix(batch))))(_ => true)

  /**
   * Deletes the items of every other life of this checkpoint location (a checkpoint deleted, and the query started
   * again on the same path): called once, when this life's identity was created. Returns how many it deleted.
   */
  def purgeOtherRuns(): Int = deleteWhere("", Map.empty)(!_.startsWith(runPrefix))

  /** Deletes the items of this query's partition that `sortKeyCondition` selects and whose sort key `delete` names. */
  private def deleteWhere(sortKeyCondition: String, values: Map[String, AttributeValue])(
      delete: String => Boolean): Int = {
    var start: java.util.Map[String, AttributeValue] = null
    var deleted = 0
    do {
      val page = errors.call("Query")(dynamo(_.query(QueryRequest.builder().tableName(table.name)
        .keyConditionExpression("#pk = :pk" + (if (sortKeyCondition.isEmpty) "" else s" AND $sortKeyCondition"))
        .expressionAttributeNames(Map("#pk" -> PartitionKey, "#sk" -> SortKey).asJava)
        .expressionAttributeValues((values + (":pk" -> text(queryKey))).asJava)
        .projectionExpression("#pk, #sk").consistentRead(true).exclusiveStartKey(start).build())))
      page.items.asScala.filter(k => delete(k.get(SortKey).s)).grouped(MaxBatchWrite).foreach { keys =>
        errors.call("BatchWriteItem")(batchDelete(keys.map(k =>
          WriteRequest.builder()
            .deleteRequest(DeleteRequest.builder().key(k).build()).build()).toVector))
        deleted += keys.size
      }
      start = if (page.hasLastEvaluatedKey && !page.lastEvaluatedKey.isEmpty) page.lastEvaluatedKey else null
    } while (start != null)
    deleted
  }

  private def key(batch: Long, task: Int): Map[String, AttributeValue] =
    Map(PartitionKey -> text(queryKey), SortKey -> text(f"$runPrefix${batchPrefix(batch)}$task%010d"))

  private def parse(item: java.util.Map[String, AttributeValue]): TaskEndRecord = {
    val where = s"in DynamoDB table ${table.name} under ($queryKey, ${item.get(SortKey).s})"
    TaskEndRecord.fromJson(
      Option(item.get(RecordAttribute)).map(_.s).getOrElse(
        throw new IllegalStateException(s"The item $where has no $RecordAttribute attribute")),
      where)
  }

  private def batchGet(keys: Seq[Map[String, AttributeValue]]): Seq[TaskEndRecord] = {
    var pending: java.util.Map[String, KeysAndAttributes] = Map(table.name ->
      KeysAndAttributes.builder().keys(keys.map(_.asJava).asJava).consistentRead(true).build()).asJava
    val found = Vector.newBuilder[TaskEndRecord]
    retryingUnprocessed("BatchGetItem") { () =>
      val response = dynamo(_.batchGetItem(BatchGetItemRequest.builder().requestItems(pending).build()))
      Option(response.responses.get(table.name)).foreach(_.asScala.foreach(item => found += parse(item)))
      pending = response.unprocessedKeys
      pending == null || pending.isEmpty
    }
    found.result()
  }

  private def batchDelete(requests: Seq[WriteRequest]): Unit = {
    var pending: java.util.Map[String, java.util.List[WriteRequest]] = Map(table.name -> requests.asJava).asJava
    retryingUnprocessed("BatchWriteItem") { () =>
      pending = dynamo(_.batchWriteItem(BatchWriteItemRequest.builder().requestItems(pending).build())).unprocessedItems
      pending == null || pending.isEmpty
    }
  }

  /**
   * Runs `round` until it reports nothing left unprocessed: DynamoDB returns unprocessed keys when it throttles, and
   * asks for exponential backoff between rounds. Bounded: after 10 rounds (about 50 s) the call fails.
   */
  private def retryingUnprocessed(operation: String)(round: () => Boolean): Unit = {
    var attempt = 0
    while (!round()) {
      attempt += 1
      if (attempt >= MaxUnprocessedRounds) throw new IllegalStateException(
        s"DynamoDB left part of a $operation on table ${table.name} unprocessed $attempt times in a row " +
          s"(throttling): " +
          "the table's throughput is exhausted; retry later.")
      Thread.sleep(math.min(100L << attempt, 10000L)) // DynamoDB's advice: back off before asking again
    }
  }
}

object DynamoDbShardEndStore {
  val PartitionKey = "queryCheckpoint"
  val SortKey = "batchTask"
  val RecordAttribute = "taskEnd"

  /** The item's expiry in epoch seconds, the attribute to name when enabling DynamoDB's TTL on the table. */
  val ExpiresAttribute = "expiresAt"

  /**
   * How long an item lives unless purged first: longer than Kinesis keeps any record (365 days at most), so an item
   * expires only once the records it bounds are gone from the stream too.
   */
  val ItemLifetimeMs: Long = java.util.concurrent.TimeUnit.DAYS.toMillis(400)

  private val RunPrefix = "run-"

  private val MaxBatchGet = 100
  private val MaxBatchWrite = 25
  private val MaxUnprocessedRounds = 10

  /** The sort key prefix of a batch; every key of batches below it sorts before it. */
  private def batchPrefix(batch: Long): String = f"$batch%019d/"

  private def text(s: String): AttributeValue = AttributeValue.builder().s(s).build()

  /** BatchGetItems the driver sends at once for queries with more than 100 tasks; daemon threads. */
  private lazy val readers = Executors.newFixedThreadPool(
    4,
    new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val thread = new Thread(r, "kinesis-dynamodb-reads")
        thread.setDaemon(true)
        thread
      }
    })
}
