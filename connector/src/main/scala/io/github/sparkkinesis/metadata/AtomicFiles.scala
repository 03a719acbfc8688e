package io.github.sparkkinesis.metadata

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{FileAlreadyExistsException => NioFileExists, Files, Paths}
import java.util.UUID

import scala.util.{Success, Try}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, FileContext, FileSystem, Path, UnsupportedFileSystemException}
import org.apache.hadoop.io.IOUtils

/**
 * Small files published at most once: the content is written to a temporary file and then made visible without
 * overwriting (a hard link on local disks, where rename(2) would overwrite; a non-overwriting rename elsewhere, atomic
 * on HDFS), so when two writers race exactly one wins and both see the winner's content. As Spark's checkpoint file
 * manager does, the rename goes through Hadoop's FileContext where the scheme has an AbstractFileSystem bound, and
 * through the FileSystem otherwise (a scheme with only `fs.<scheme>.impl` set), whose rename, by Hadoop's file system
 * contract, fails rather than replace an existing file.
 */
private[sparkkinesis] object AtomicFiles {

  /**
   * Object stores whose Hadoop connectors rename by copying (a check, then a copy: two writers can both "win"), so
   * publishing there is not first-writer-wins. abfs/abfss are among them unless the account has a hierarchical
   * namespace, which Hadoop's ABFS connector tells by preserving etags on rename. No conditional create (S3's
   * If-None-Match) is reachable through the file system API of the Hadoop releases Spark 3.5 and 4.x bundle.
   */
  private val CopyingRenameSchemes =
    Set("s3", "s3a", "s3n", "gs", "wasb", "wasbs", "oss", "cos", "cosn", "obs", "abfs", "abfss", "dbfs")

  /**
   * Schemes that mount other file systems: what counts is the scheme of the mount's target. Databricks' `dbfs:` is
   * refused outright (its root and mounts are object storage), so only Hadoop's view file systems are here.
   */
  private val MountSchemes = Set("viewfs", "viewfss")

  /**
   * Fails, naming the fix, unless files published under `dir` are published atomically (at most one writer wins): the
   * Hadoop metadata store relies on it for exactly-once reads. `what` names the directory in the message (the path and
   * the option or checkpoint it comes from).
   */
  def requireAtomicPublish(dir: Path, conf: Configuration, what: String): Unit = {
    val given =
      lower(Option(dir.toUri.getScheme).orElse(Option(FileSystem.getDefaultUri(conf).getScheme)).getOrElse("file"))
    // Decided by the scheme before any FileSystem is loaded: an object store's connector (S3A, say) is often not on the
    // classpath, and loading it fails with a ClassNotFoundException that names neither the option nor the path. Only
    // a mount's target and an ABFS account's namespace need the file system itself.
    val fs = if (MountSchemes.contains(given) || given.startsWith("abfs")) loaded(dir, conf) else None
    val scheme = fs.fold(given)(targetScheme(_, dir))
    val hierarchicalAbfs = scheme.startsWith("abfs") &&
      fs.exists(_.hasPathCapability(dir, org.apache.hadoop.fs.CommonPathCapabilities.ETAGS_PRESERVED_IN_RENAME))
    if (CopyingRenameSchemes.contains(scheme) && !hierarchicalAbfs) {
      throw new IllegalArgumentException(
        s"${what.capitalize} is on $scheme://, an object store without an atomic no-overwrite rename, where two " +
          "attempts of a task could both record where a batch ended and records could be read twice or lost. Set " +
          "kinesis.metadataCommitterType=DYNAMODB (with kinesis.dynamodb.tableName) to keep these records in " +
          "DynamoDB, or point kinesis.metadataPath at HDFS.")
    }
    if (fs.isEmpty) requireFileSystemClass(given, conf, what)
  }

  /**
   * Fails, naming the fix, unless Hadoop has a FileSystem class for `scheme` (`fs.<scheme>.impl`, or one its service
   * loader found) and that class is on the class path; only the class is loaded, no file system is built. Otherwise the
   * first use would fail with Hadoop's own error, which names neither the path nor the option.
   */
  private def requireFileSystemClass(scheme: String, conf: Configuration, what: String): Unit = {
    val missing =
      try {
        FileSystem.getFileSystemClass(scheme, conf)
        None
      } catch {
        case e: UnsupportedFileSystemException => Some(e.getMessage)
        case e: RuntimeException if e.getCause.isInstanceOf[ClassNotFoundException] =>
          Some(s"class ${conf.get(s"fs.$scheme.impl")} of fs.$scheme.impl is not on the class path")
      }
    missing.foreach { why =>
      throw new IllegalArgumentException(
        s"${what.capitalize} is on $scheme://, for which Hadoop has no file system ($why). Put the JAR of a Hadoop " +
          s"file system for $scheme:// on the driver's and executors' class path (or correct the scheme), set " +
          "kinesis.metadataCommitterType=DYNAMODB (with kinesis.dynamodb.tableName) to keep these records in " +
          "DynamoDB, or point kinesis.metadataPath at HDFS.")
    }
  }

  /** The file system of `dir`; None when its connector is not on the classpath (then its namespace is unknown). */
  private def loaded(dir: Path, conf: Configuration): Option[FileSystem] =
    try Some(dir.getFileSystem(conf))
    catch {
      case _: UnsupportedFileSystemException => None
      case e: RuntimeException if e.getCause.isInstanceOf[ClassNotFoundException] => None
    }

  /**
   * The scheme of the file system that holds `dir`: for a view file system, that of the mount's target, found by
   * resolving the nearest ancestor that exists (resolving a path that does not exist fails). A mount that cannot be
   * resolved keeps the view's own scheme.
   */
  private def targetScheme(fs: FileSystem, dir: Path): String = {
    val own = lower(Option(fs.getScheme).getOrElse(fs.getUri.getScheme))
    if (!MountSchemes.contains(own)) own
    else Iterator.iterate(fs.makeQualified(dir))(_.getParent).takeWhile(_ != null)
      .map(p => Try(fs.resolvePath(p)))
      .collectFirst { case Success(target) if target.toUri.getScheme != null => lower(target.toUri.getScheme) }
      .getOrElse(own)
  }

  private def lower(s: String): String = s.toLowerCase(java.util.Locale.ROOT)

  /** Publishes `content` at `target` unless a file is there; true when this call's content was published. */
  def publishIfAbsent(target: Path, content: String, conf: Configuration): Boolean = {
    val fs = target.getFileSystem(conf)
    if (fs.getScheme == "file") publishLocal(fs.makeQualified(target), content)
    else {
      fs.mkdirs(target.getParent)
      val tmp = new Path(target.getParent, s".${target.getName}.${UUID.randomUUID()}.tmp")
      val out = fs.create(tmp, false)
      try out.write(content.getBytes(UTF_8))
      finally out.close()
      try renameIfAbsent(fs, tmp, target, conf)
      finally fs.delete(tmp, false)
    }
  }

  /** Renames `tmp` to `target` unless a file is there; true when it did. */
  private def renameIfAbsent(fs: FileSystem, tmp: Path, target: Path, conf: Configuration): Boolean = {
    val context =
      try Some(FileContext.getFileContext(target.toUri, conf))
      catch {
        case _: UnsupportedFileSystemException => None // no AbstractFileSystem bound: the FileSystem renames
      }
    context match {
      case Some(fc) =>
        try {
          fc.rename(tmp, target, org.apache.hadoop.fs.Options.Rename.NONE)
          true
        } catch {
          case _: FileAlreadyExistsException => false
        }
      case None =>
        // By Hadoop's contract rename fails (false, or an exception) rather than replace a file; the check first
        // also covers file systems that bend it, as Spark's FileSystem-based checkpoint file manager does.
        !fs.exists(target) && (try fs.rename(tmp, target)
        catch { case _: FileAlreadyExistsException => false })
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
    val in =
      try fs.open(path)
      catch { case _: java.io.FileNotFoundException => return None }
    try {
      val bytes = new ByteArrayOutputStream()
      IOUtils.copyBytes(in, bytes, 4096, false)
      Some(new String(bytes.toByteArray, UTF_8))
    } finally in.close()
  }
}
