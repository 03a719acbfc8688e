package io.github.sparkkinesis.metadata

import java.io.{ObjectInputStream, ObjectOutputStream}
import java.util.concurrent.{Callable, Executors, ThreadFactory}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * [[ShardEndStore]] on a Hadoop file system: one small JSON file per batch and task, `tasks/<batch>/<task>.json` under
 * `root`, published with [[AtomicFiles]] so that exactly one attempt's record wins. Versions before 0.2.0 wrote one
 * file per shard, `<stream>/<batch>/<shardId>.json`; those are still read and purged. Serializable, Hadoop
 * configuration included, so executors write with the driver's file system settings.
 */
final class HadoopShardEndStore(root: String, @transient private var conf: Configuration, explicit: Boolean = false)
    extends ShardEndStore {

  private def batchDir(batch: Long): Path =
    new Path(new Path(new Path(root), HadoopShardEndStore.Tasks), batch.toString)

  private def fileOf(batch: Long, task: Int): Path = new Path(batchDir(batch), s"$task.json")

  override def get(batch: Long, task: Int): Option[TaskEndRecord] = {
    val file = fileOf(batch, task)
    AtomicFiles.read(file, conf).map(TaskEndRecord.fromJson(_, file.toString))
  }

  /** One read per task, several at once: the files are small, so the round trips are the cost. */
  override def getAll(batch: Long, tasks: Seq[Int]): Map[Int, TaskEndRecord] =
    if (tasks.size <= 1) tasks.flatMap(t => get(batch, t).map(t -> _)).toMap
    else {
      val reads = tasks.map(t =>
        HadoopShardEndStore.readers.submit(new Callable[Option[TaskEndRecord]] {
          override def call(): Option[TaskEndRecord] = get(batch, t)
        }))
      tasks.zip(reads).flatMap { case (t, read) => read.get().map(t -> _) }.toMap
    }

  override def recordIfAbsent(record: TaskEndRecord): TaskEndRecord = {
    val target = fileOf(record.batch, record.task)
    if (AtomicFiles.publishIfAbsent(target, record.toJson, conf)) record
    else get(record.batch, record.task).getOrElse(throw new IllegalStateException(
      s"$target was reported as existing but cannot be read; check the file system of $describe"))
  }

  override def purgeBefore(batch: Long): Unit = {
    val top = new Path(root)
    val fs = top.getFileSystem(conf)
    if (fs.exists(top)) {
      // tasks/ and, from versions before 0.2.0, one directory per stream: each holds one directory per batch
      fs.listStatus(top).filter(_.isDirectory).foreach { dir =>
        fs.listStatus(dir.getPath).foreach { status =>
          val name = status.getPath.getName
          if (name.nonEmpty && name.forall(_.isDigit) && name.toLong < batch) fs.delete(status.getPath, true)
        }
      }
    }
  }

  /**
   * Creates the root directory if need be, on the driver when the query starts: a path the file system refuses (one
   * under a regular file, say) fails there, naming its option, rather than in the first task that records an end.
   */
  def createRoot(): Unit = {
    val top = new Path(root)
    val why =
      try if (top.getFileSystem(conf).mkdirs(top)) None else Some("the file system refused to create it")
      catch { case e: java.io.IOException => Some(s"${e.getClass.getSimpleName}: ${e.getMessage}") }
    why.foreach { reason =>
      throw new IllegalArgumentException(s"The metadata store cannot create $describe: $reason. " +
        (if (explicit) "Point kinesis.metadataPath at a directory the query may create and write, whose parents are " +
           "directories, or leave it unset to keep the records in the checkpoint."
         else "Give the query a checkpoint location it may create and write, or set kinesis.metadataPath."))
    }
  }

  override def describe: String = HadoopShardEndStore.describe(root, explicit)

  override def foreignRecordsAdvice: String =
    if (explicit) "Give each query its own kinesis.metadataPath, or leave it unset to keep the records in the " +
      "checkpoint."
    else "Each query needs a checkpoint location of its own."

  override def legacyGet(stream: String, batch: Long, shardId: String): Option[ShardEndRecord] = {
    val file = new Path(new Path(new Path(new Path(root), stream), batch.toString), s"$shardId.json")
    AtomicFiles.read(file, conf).map(ShardEndRecord.fromJson(_, file.toString))
  }

  private def writeObject(out: ObjectOutputStream): Unit = {
    out.defaultWriteObject()
    conf.write(out)
  }

  private def readObject(in: ObjectInputStream): Unit = {
    in.defaultReadObject()
    conf = new Configuration(false)
    conf.readFields(in)
  }
}

private object HadoopShardEndStore {

  /** The store's directory `root` for messages: the path and whether option kinesis.metadataPath named it. */
  def describe(root: String, explicit: Boolean): String =
    s"the directory $root" + (if (explicit) " (option kinesis.metadataPath)" else " inside the checkpoint")

  /** The directory of task records; a stream's legacy directory of that name holds only `shardId-*.json` files. */
  val Tasks = "tasks"

  /** Reads the driver makes at once; daemon threads, so an idle pool never keeps a JVM alive. */
  lazy val readers = Executors.newFixedThreadPool(
    16,
    new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val thread = new Thread(r, "kinesis-shard-end-reads")
        thread.setDaemon(true)
        thread
      }
    })
}
