package io.github.sparkkinesis.metadata

import java.io.{ObjectInputStream, ObjectOutputStream}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * [[ShardEndStore]] on a Hadoop file system: one small JSON file per stream, batch and shard under `root`,
 * published with [[AtomicFiles]] so that exactly one attempt's record wins. Serializable, Hadoop
 * configuration included, so executors write with the driver's file system settings.
 */
final class HadoopShardEndStore(root: String, @transient private var conf: Configuration) extends ShardEndStore {

  private def fileOf(stream: String, batch: Long, shardId: String): Path =
    new Path(new Path(new Path(new Path(root), stream), batch.toString), s"$shardId.json")

  override def get(stream: String, batch: Long, shardId: String): Option[ShardEndRecord] = {
    val file = fileOf(stream, batch, shardId)
    AtomicFiles.read(file, conf).map(ShardEndRecord.fromJson(_, file.toString))
  }

  override def recordIfAbsent(record: ShardEndRecord): ShardEndRecord = {
    val target = fileOf(record.stream, record.batch, record.shardId)
    if (AtomicFiles.publishIfAbsent(target, record.toJson, conf)) record
    else get(record.stream, record.batch, record.shardId).getOrElse(throw new IllegalStateException(
      s"$target was reported as existing but cannot be read; check the file system of kinesis.metadataPath"))
  }

  override def purgeBefore(stream: String, batch: Long): Unit = {
    val dir = new Path(new Path(root), stream)
    val fs = dir.getFileSystem(conf)
    if (fs.exists(dir)) {
      fs.listStatus(dir).foreach { status =>
        val name = status.getPath.getName
        if (name.nonEmpty && name.forall(_.isDigit) && name.toLong < batch) fs.delete(status.getPath, true)
      }
    }
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
