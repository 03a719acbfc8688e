package io.github.sparkkinesis.metadata

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.options.{KinesisSourceOptions, MetadataStoreSettings}

/**
 * Durable record of where each micro-batch ended in each shard, one record per task: written once by the task attempt
 * that decided it (first writer wins) and read by retried tasks, replays and the driver when it plans the next batch.
 */
trait ShardEndStore extends Serializable {

  /** The record of task `task` of micro-batch `batch`, if one was written. */
  def get(batch: Long, task: Int): Option[TaskEndRecord]

  /** The records of `tasks` of micro-batch `batch` that were written, in as few requests as the store allows. */
  def getAll(batch: Long, tasks: Seq[Int]): Map[Int, TaskEndRecord]

  /**
   * Records `record` unless a record for the same batch and task exists; returns the record that holds afterwards:
   * `record` itself, or the one an earlier attempt wrote.
   */
  def recordIfAbsent(record: TaskEndRecord): TaskEndRecord

  /** Forgets every batch numbered below `batch`. */
  def purgeBefore(batch: Long): Unit

  /**
   * The record of one shard written by a version before 0.2.0 (one record per shard), for the batches a checkpoint of
   * that version planned; None where the store never held such records.
   */
  def legacyGet(stream: String, batch: Long, shardId: String): Option[ShardEndRecord] = None

  /** Where the records are, for messages: the DynamoDB table and key, or the directory. */
  def describe: String = "the metadata store"

  /** What to do when the store holds records that do not fit the query's own checkpoint. */
  def foreignRecordsAdvice: String = "Each query needs a checkpoint location of its own."
}

/** Opens the store a query's options ask for (`kinesis.metadataCommitterType`). */
object ShardEndStores {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * The query's store, on the driver: the DynamoDB table created if missing, or the Hadoop directory checked to be on a
   * file system where first-writer-wins holds ([[AtomicFiles.requireAtomicPublish]]) and created. In DynamoDB, the
   * items are those of the checkpoint's life ([[CheckpointRun]]); a fresh checkpoint first deletes those of earlier
   * lives of the same location.
   */
  def open(
      options: KinesisSourceOptions,
      checkpointLocation: String,
      hadoopConf: Configuration,
      access: DynamoDbAccess = DynamoDbClients): ShardEndStore =
    options.metadataStore match {
      case MetadataStoreSettings.DynamoDb(tableName, endpoint) =>
        val table = DynamoDbTable(tableName, endpoint)
        table.ensure(options.client, access)
        val run = CheckpointRun.resolve(checkpointLocation, hadoopConf)
        val store =
          new DynamoDbShardEndStore(options.client, table, qualified(checkpointLocation, hadoopConf), run.id, access)
        if (run.created) {
          val purged = store.purgeOtherRuns()
          if (purged > 0) log.info(s"A new checkpoint at $checkpointLocation: deleted $purged items of the " +
            s"location's earlier checkpoints from DynamoDB table $tableName.")
        }
        store
      case MetadataStoreSettings.Hdfs =>
        val root = options.metadataPath.getOrElse(new Path(checkpointLocation, "shard-ends").toString)
        val store = new HadoopShardEndStore(root, hadoopConf, explicit = options.metadataPath.isDefined)
        AtomicFiles.requireAtomicPublish(new Path(root), hadoopConf, store.describe)
        store.createRoot()
        store
    }

  /** When the DataFrame is created: refuses a `kinesis.metadataPath` where the Hadoop store would not be safe. */
  def checkAtLoad(options: KinesisSourceOptions, hadoopConf: Configuration): Unit =
    if (options.metadataStore == MetadataStoreSettings.Hdfs) {
      options.metadataPath.foreach { p =>
        AtomicFiles.requireAtomicPublish(new Path(p), hadoopConf, HadoopShardEndStore.describe(p, explicit = true))
      }
    }

  /**
   * Whether the query's records would sit on each machine's own disk: the Hadoop store on a local (`file:`) path while
   * tasks run on other machines than the driver (not Spark's local mode). DynamoDB is shared whatever the checkpoint's
   * file system.
   */
  def onExecutorDisks(
      options: KinesisSourceOptions,
      checkpointLocation: String,
      hadoopConf: Configuration,
      localMode: Boolean): Boolean =
    !localMode && options.metadataStore == MetadataStoreSettings.Hdfs &&
      new Path(options.metadataPath.getOrElse(checkpointLocation)).getFileSystem(hadoopConf).getScheme == "file"

  /** The checkpoint location with its file system's scheme and authority: one query's key, however it was written. */
  private def qualified(location: String, conf: Configuration): String = {
    val path = new Path(location)
    path.getFileSystem(conf).makeQualified(path).toString
  }
}
