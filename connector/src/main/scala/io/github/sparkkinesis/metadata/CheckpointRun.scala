package io.github.sparkkinesis.metadata

import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.github.sparkkinesis.offsets.Json

/**
 * The identity of one checkpoint's life: generated once, when a query first starts on a fresh checkpoint, and kept in
 * the checkpoint (`metadata-run.json`). A store outside the checkpoint (DynamoDB) keys its records by it, so a query
 * started again on the same path after its checkpoint was deleted starts clean instead of meeting the records of the
 * checkpoint's earlier life.
 *
 * @param id
 *   None for a checkpoint started before run identities existed (0.1.0 and 0.2.0 without one): its records keep the
 *   keys they were written under
 * @param created
 *   whether this call created the identity: the checkpoint is fresh, and records of any other life of the same path are
 *   dead
 */
final case class CheckpointRun(id: Option[String], created: Boolean)

object CheckpointRun {
  val FileName = "metadata-run.json"
  private val Version = 1

  /** Written by every version at a query's first batch: its presence without an identity marks an older checkpoint. */
  private val InitialOffsetFile = "initial-offset.json"

  /**
   * The run identity of the source checkpoint at `location`: the stored one; none for a checkpoint an older version
   * started; a new one (published at most once, so concurrent callers agree) for a fresh checkpoint.
   */
  def resolve(location: String, conf: Configuration): CheckpointRun = {
    val file = new Path(location, FileName)
    read(file, conf) match {
      case Some(id) => CheckpointRun(Some(id), created = false)
      case None if file.getFileSystem(conf).exists(new Path(location, InitialOffsetFile)) =>
        CheckpointRun(None, created = false)
      case None =>
        val fresh = UUID.randomUUID().toString
        val won = AtomicFiles.publishIfAbsent(
          file,
          Json.write(Json.obj(
            "version" -> Json.number(Version.toLong),
            "runId" -> Json.text(fresh))),
          conf)
        CheckpointRun(Some(read(file, conf).getOrElse(fresh)), created = won)
    }
  }

  private def read(file: Path, conf: Configuration): Option[String] = AtomicFiles.read(file, conf).map { raw =>
    val what = s"the checkpoint's run identity $file"
    val node = Json.read(raw, what)
    Json.checkVersion(node, Version, what)
    Json.field(node, "runId", what).asText()
  }
}
