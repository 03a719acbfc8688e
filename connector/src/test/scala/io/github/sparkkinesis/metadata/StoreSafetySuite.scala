package io.github.sparkkinesis.metadata

import java.net.URI
import java.nio.file.Files

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.RawLocalFileSystem
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.options.KinesisSourceOptions

/** The Hadoop store only where first-writer-wins holds: object stores that rename by copying are refused. */
class StoreSafetySuite extends AnyFunSuite with Matchers {

  /** s3a:// served by a test file system: what matters is the scheme of a store whose rename copies. */
  private def conf(): Configuration = {
    val c = new Configuration(false)
    c.set("fs.s3a.impl", classOf[CopyingRenameFileSystem].getName)
    c.setBoolean("fs.s3a.impl.disable.cache", true)
    c
  }

  private def options(extra: (String, String)*) =
    KinesisSourceOptions.parse(Map("kinesis.streamName" -> "orders") ++ extra)

  test("Given a checkpoint on an object store without atomic rename, when the Hadoop store opens, then it refuses " +
    "naming DYNAMODB") {
    // When
    val e = the[IllegalArgumentException] thrownBy ShardEndStores.open(options(), "s3a://bucket/checkpoints/q1", conf())

    // Then
    Seq(
      "s3a://bucket/checkpoints/q1/shard-ends",
      "atomic no-overwrite rename",
      "kinesis.metadataCommitterType",
      "DYNAMODB",
      "kinesis.dynamodb.tableName").foreach(e.getMessage should include(_))
  }

  test("Given kinesis.metadataPath on such a store, when the DataFrame is created, then load() refuses it") {
    val e = the[IllegalArgumentException] thrownBy ShardEndStores.checkAtLoad(
      options("kinesis.metadataPath" -> "s3a://bucket/metadata"),
      conf())
    e.getMessage should include("DYNAMODB")
  }

  test("Given kinesis.metadataPath, or a checkpoint, on s3a:// without S3A on the classpath, when the DataFrame is " +
    "created or the query starts, then it is refused by its scheme, naming the option or the checkpoint, the path " +
    "and the DynamoDB store, before a file system is loaded") {
    // Given Hadoop's defaults, which bind s3a:// to S3AFileSystem, a class this classpath does not have
    val defaults = new Configuration()
    Try(Class.forName(defaults.get("fs.s3a.impl"))).isFailure shouldBe true
    val onS3 = options("kinesis.metadataPath" -> "s3a://bucket/metadata")
    val local = Files.createTempDirectory("checkpoint").toString

    // When
    val atLoad = the[IllegalArgumentException] thrownBy ShardEndStores.checkAtLoad(onS3, defaults)
    val atStart = the[IllegalArgumentException] thrownBy ShardEndStores.open(onS3, local, defaults)
    val checkpoint = the[IllegalArgumentException] thrownBy
      ShardEndStores.open(options(), "s3a://bucket/checkpoints/q1", defaults)

    // Then
    Seq(atLoad, atStart).foreach(_.getMessage shouldBe "The directory s3a://bucket/metadata (option " +
      "kinesis.metadataPath) is on s3a://, an object store without an atomic no-overwrite rename, where two " +
      "attempts of a task could both record where a batch ended and records could be read twice or lost. Set " +
      "kinesis.metadataCommitterType=DYNAMODB (with kinesis.dynamodb.tableName) to keep these records in DynamoDB, " +
      "or point kinesis.metadataPath at HDFS.")
    checkpoint.getMessage should startWith("The directory s3a://bucket/checkpoints/q1/shard-ends inside the " +
      "checkpoint is on s3a://, an object store")
    checkpoint.getMessage should include("kinesis.metadataCommitterType=DYNAMODB")
  }

  test("Given kinesis.metadataPath on a scheme Hadoop has no file system for (none bound, or its class missing), " +
    "when the DataFrame is created, then load() refuses it naming the option, the path, the scheme and the fix") {
    // Given a scheme bound to nothing, and one bound to a class this classpath does not have
    val c = new Configuration()
    c.set("fs.vendorfs.impl", "com.example.VendorFileSystem")

    // When
    val unbound = the[IllegalArgumentException] thrownBy
      ShardEndStores.checkAtLoad(options("kinesis.metadataPath" -> "hdfss://cluster/metadata"), c)
    val missing = the[IllegalArgumentException] thrownBy
      ShardEndStores.checkAtLoad(options("kinesis.metadataPath" -> "vendorfs://bucket/metadata"), c)

    // Then
    unbound.getMessage shouldBe "The directory hdfss://cluster/metadata (option kinesis.metadataPath) is on " +
      "hdfss://, for which Hadoop has no file system (No FileSystem for scheme \"hdfss\"). Put the JAR of a Hadoop " +
      "file system for hdfss:// on the driver's and executors' class path (or correct the scheme), set " +
      "kinesis.metadataCommitterType=DYNAMODB (with kinesis.dynamodb.tableName) to keep these records in DynamoDB, " +
      "or point kinesis.metadataPath at HDFS."
    missing.getMessage should startWith("The directory vendorfs://bucket/metadata (option kinesis.metadataPath) is " +
      "on vendorfs://, for which Hadoop has no file system (class com.example.VendorFileSystem of fs.vendorfs.impl " +
      "is not on the class path). Put the JAR of a Hadoop file system for vendorfs://")
  }

  test("Given kinesis.metadataPath under a regular file, when the query starts, then it is refused naming the " +
    "option and the path, not with the file system's bare error at the first record") {
    // Given
    val file = Files.createTempFile("not-a-directory", ".txt")
    val path = s"$file/metadata"

    // When
    val e = the[IllegalArgumentException] thrownBy ShardEndStores.open(
      options("kinesis.metadataPath" -> path),
      Files.createTempDirectory("checkpoint").toString,
      new Configuration()).recordIfAbsent(TaskEndRecord(0L, 0, Seq.empty))

    // Then
    e.getMessage should startWith(s"The metadata store cannot create the directory $path (option " +
      "kinesis.metadataPath): ")
    e.getMessage should endWith("Point kinesis.metadataPath at a directory the query may create and write, whose " +
      "parents are directories, or leave it unset to keep the records in the checkpoint.")
  }

  test("Given a checkpoint on an object store and kinesis.metadataPath on a local disk, when opened, then the Hadoop " +
    "store is used") {
    val local = Files.createTempDirectory("metadata").toString
    ShardEndStores.checkAtLoad(options("kinesis.metadataPath" -> local), conf())
    ShardEndStores.open(options("kinesis.metadataPath" -> local), "s3a://bucket/checkpoints/q1", conf()) shouldBe
      a[HadoopShardEndStore]
  }

  test("given a file system with only fs.<scheme>.impl set (no AbstractFileSystem), when two attempts publish, then " +
    "the first wins through the FileSystem's rename, as Spark's checkpoint file manager falls back") {
    // Given a scheme served by a FileSystem alone, as gs:// is with only fs.gs.impl set
    val c = new Configuration(false)
    c.set("fs.fakefs.impl", classOf[ContractRenameFileSystem].getName)
    c.setBoolean("fs.fakefs.impl.disable.cache", true)
    val root = s"fakefs://${Files.createTempDirectory("fakefs")}/shard-ends"

    // When
    val target = new org.apache.hadoop.fs.Path(s"$root/tasks/0/0.json")
    AtomicFiles.publishIfAbsent(target, "first", c) shouldBe true
    AtomicFiles.publishIfAbsent(target, "second", c) shouldBe false

    // Then
    AtomicFiles.read(target, c) shouldBe Some("first")
    ShardEndStores.checkAtLoad(options("kinesis.metadataPath" -> root), c)
  }

  test("given a checkpoint on dbfs:, when the Hadoop store opens, then it refuses naming DYNAMODB") {
    val c = new Configuration(false)
    c.set("fs.dbfs.impl", classOf[DbfsFileSystem].getName)
    c.setBoolean("fs.dbfs.impl.disable.cache", true)
    val e = the[IllegalArgumentException] thrownBy ShardEndStores.open(options(), "dbfs:/checkpoints/q1", c)
    Seq("dbfs:", "atomic no-overwrite rename", "DYNAMODB").foreach(e.getMessage should include(_))
  }

  test("given a checkpoint on a viewfs: mount of an object store, when the Hadoop store opens, then it refuses it, " +
    "and a mount of a local disk is accepted") {
    // Given viewfs://cluster/data mounted on s3a://bucket/<dir> and viewfs://cluster/local on the local disk
    val c = conf()
    c.set("fs.viewfs.mounttable.cluster.link./data", s"s3a://bucket${Files.createTempDirectory("mounted")}")
    c.set("fs.viewfs.mounttable.cluster.link./local", s"file://${Files.createTempDirectory("mounted-local")}")
    c.set("fs.viewfs.impl", "org.apache.hadoop.fs.viewfs.ViewFileSystem")
    c.set("fs.file.impl", classOf[org.apache.hadoop.fs.LocalFileSystem].getName)
    c.setBoolean("fs.viewfs.impl.disable.cache", true)

    // When / Then
    val e = the[IllegalArgumentException] thrownBy ShardEndStores.open(options(), "viewfs://cluster/data/q1", c)
    Seq("viewfs://cluster/data/q1/shard-ends", "s3a", "DYNAMODB").foreach(e.getMessage should include(_))
    ShardEndStores.open(options(), "viewfs://cluster/local/q1", c) shouldBe a[HadoopShardEndStore]
  }

  test("given a local checkpoint on a cluster, then the Hadoop store's records are on executors' disks, and " +
    "DynamoDB's or local mode's are not") {
    val local = Files.createTempDirectory("checkpoint").toString
    val dynamo = options(
      "kinesis.metadataCommitterType" -> "DYNAMODB",
      "kinesis.dynamodb.tableName" -> "ends",
      "kinesis.region" -> "us-east-1")
    ShardEndStores.onExecutorDisks(options(), local, conf(), localMode = false) shouldBe true
    ShardEndStores.onExecutorDisks(options(), local, conf(), localMode = true) shouldBe false
    ShardEndStores.onExecutorDisks(dynamo, local, conf(), localMode = false) shouldBe false
    ShardEndStores.onExecutorDisks(
      options("kinesis.metadataPath" -> "s3a://bucket/m"),
      local,
      conf(),
      localMode = false) shouldBe false
  }
}

/** A local file system that answers to s3a://bucket, standing in for S3A (whose rename copies, then deletes). */
final class CopyingRenameFileSystem extends RawLocalFileSystem {
  override def getScheme: String = "s3a"
  override def getUri: URI = URI.create("s3a://bucket")
}

/**
 * A local file system whose rename follows Hadoop's contract (no replacing an existing file), for a scheme of its own.
 */
final class ContractRenameFileSystem extends RawLocalFileSystem {
  override def getScheme: String = "fakefs"
  override def getUri: URI = URI.create("fakefs:///")
  override def rename(src: org.apache.hadoop.fs.Path, dst: org.apache.hadoop.fs.Path): Boolean =
    !exists(dst) && super.rename(src, dst)
}

/** A local file system that answers to dbfs:/, standing in for Databricks' file system. */
final class DbfsFileSystem extends RawLocalFileSystem {
  override def getScheme: String = "dbfs"
  override def getUri: URI = URI.create("dbfs:///")
}
