package io.github.sparkkinesis.metadata

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{FileAlreadyExistsException => NioFileExists, Files, Paths}
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, FileContext, Path}
import org.apache.hadoop.io.IOUtils

/**
 * Small files published at most once: the content is written to a temporary file and then made visible
 * without overwriting (a hard link on local disks, where rename(2) would overwrite; a non-overwriting rename
 * elsewhere, atomic on HDFS), so when two writers race exactly one wins and both see the winner's content.
 */
private[sparkkinesis] object AtomicFiles {

  /** Publishes `content` at `target` unless a file is there; true when this call's content was published. */
  def publishIfAbsent(target: Path, content: String, conf: Configuration): Boolean = {
    val fs = target.getFileSystem(conf)
    if (fs.getScheme == "file") publishLocal(fs.makeQualified(target), content)
    else {
      fs.mkdirs(target.getParent)
      val tmp = new Path(target.getParent, s".${target.getName}.${UUID.randomUUID()}.tmp")
      val out = fs.create(tmp, false)
      try out.write(content.getBytes(UTF_8)) finally out.close()
      try {
        FileContext.getFileContext(target.toUri, conf).rename(tmp, target, org.apache.hadoop.fs.Options.Rename.NONE)
        true
      } catch {
        case _: FileAlreadyExistsException => false
      } finally {
        fs.delete(tmp, false)
      }
    }
  }

  private def publishLocal(target: Path, content: String): Boolean = {
    val file = Paths.get(target.toUri)
    Files.createDirectories(file.getParent)
    val tmp = file.resolveSibling(s".${file.getFileName}.${UUID.randomUUID()}.tmp")
    Files.write(tmp, content.getBytes(UTF_8))
    try {
      Files.createLink(file, tmp)
      true
    } catch {
      case _: NioFileExists => false
    } finally Files.deleteIfExists(tmp)
  }

  /** The file's content, or None when there is no file: one request (an open), not an existence check first. */
  def read(path: Path, conf: Configuration): Option[String] = {
    val fs = path.getFileSystem(conf)
    val in = try fs.open(path) catch { case _: java.io.FileNotFoundException => return None }
    try {
      val bytes = new ByteArrayOutputStream()
      IOUtils.copyBytes(in, bytes, 4096, false)
      Some(new String(bytes.toByteArray, UTF_8))
    } finally in.close()
  }
}
