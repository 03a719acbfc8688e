package io.github.sparkkinesis.metadata

import java.net.URI
import java.nio.file.Files

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

  private def options(extra: (String, String)*) = KinesisSourceOptions.parse(Map("kinesis.streamName" -> "orders") ++ extra)

  test("Given a checkpoint on an object store without atomic rename, when the Hadoop store opens, then it refuses naming DYNAMODB") {
    // When
    val e = the[IllegalArgumentException] thrownBy ShardEndStores.open(options(), "s3a://bucket/checkpoints/q1", conf())

    // Then
    Seq("s3a://bucket/checkpoints/q1/shard-ends", "atomic no-overwrite rename", "kinesis.metadataCommitterType",
      "DYNAMODB", "kinesis.dynamodb.tableName").foreach(e.getMessage should include(_))
  }

  test("Given kinesis.metadataPath on such a store, when the DataFrame is created, then load() refuses it") {
    val e = the[IllegalArgumentException] thrownBy ShardEndStores.checkAtLoad(
      options("kinesis.metadataPath" -> "s3a://bucket/metadata"), conf())
    e.getMessage should include("DYNAMODB")
  }

  test("Given a checkpoint on an object store and kinesis.metadataPath on a local disk, when opened, then the Hadoop store is used") {
    val local = Files.createTempDirectory("metadata").toString
    ShardEndStores.checkAtLoad(options("kinesis.metadataPath" -> local), conf())
    ShardEndStores.open(options("kinesis.metadataPath" -> local), "s3a://bucket/checkpoints/q1", conf()) shouldBe
      a[HadoopShardEndStore]
  }
}

/** A local file system that answers to s3a://bucket, standing in for S3A (whose rename copies, then deletes). */
final class CopyingRenameFileSystem extends RawLocalFileSystem {
  override def getScheme: String = "s3a"
  override def getUri: URI = URI.create("s3a://bucket")
}
