package io.github.sparkkinesis.source.planning

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.github.sparkkinesis.client.StreamRef
import io.github.sparkkinesis.metadata.AtomicFiles

/**
 * What a query's checkpoint records about the stream consumers of one `stream`: the consumer the query registered (its
 * owner file, [[ConsumerRecords.ownerFileName]]), which it may deregister, and one it reads through without having
 * registered it (its reader file, [[ConsumerRecords.readerFileName]]), which it never deregisters. Each file holds one
 * consumer ARN, written atomically.
 */
private[sparkkinesis] final class ConsumerRecords(checkpoint: Path, stream: String, hadoopConf: Configuration) {

  private val ownerFile = new Path(checkpoint, ConsumerRecords.ownerFileName(stream))
  private val readerFile = new Path(checkpoint, ConsumerRecords.readerFileName(stream))

  /**
   * Where releases before 0.2.0 recorded the consumer of a stream named by ARN, under its name alone: read only if it
   * names a consumer of this very stream (another account's stream of the same name shared that file).
   */
  private val legacyOwnerFile =
    Some(new Path(checkpoint, ConsumerRecords.legacyOwnerFileName(stream))).filter(_ != ownerFile)

  /** The checkpoint's location, qualified by its file system: what the connector's consumer tags name. */
  lazy val checkpointLocation: String = ownerFile.getFileSystem(hadoopConf).makeQualified(checkpoint).toString

  /** The consumer the owner file names, if any (not the legacy file's). */
  def owned: Option[String] = read(ownerFile)

  /** The consumer this query last registered, as its checkpoint records it; `own`: the owner file's content. */
  def registered(own: Option[String] = owned): Option[String] = own.orElse(
    legacyOwnerFile.flatMap(read).filter(arn => StreamRef.arnOf(arn) == StreamRef.arnOf(stream)))

  /** Records `consumerArn` as registered by this query, replacing a record of an earlier consumer, if there is one. */
  def recordRegistration(consumerArn: String, replacing: Boolean): Unit = {
    if (replacing) delete(ownerFile) // a record of an earlier consumer of that name, deregistered since
    AtomicFiles.publishIfAbsent(ownerFile, consumerArn, hadoopConf)
  }

  /** Forgets `consumerArn`, deregistered: the owner file, and the legacy file if it names that consumer. */
  def forgetRegistration(consumerArn: String): Unit = {
    delete(ownerFile)
    legacyOwnerFile.filter(read(_).contains(consumerArn)).foreach(delete)
  }

  /** Records that this query reads through `consumerArn`, which it did not register, unless already recorded. */
  def recordReader(consumerArn: String): Unit =
    if (!read(readerFile).contains(consumerArn)) {
      delete(readerFile)
      AtomicFiles.publishIfAbsent(readerFile, consumerArn, hadoopConf)
    }

  private def read(file: Path): Option[String] = AtomicFiles.read(file, hadoopConf).map(_.trim)

  private def delete(file: Path): Unit = file.getFileSystem(hadoopConf).delete(file, false)
}

private[sparkkinesis] object ConsumerRecords {

  /**
   * The checkpoint's file that records the consumer a query registered for `stream`: by the stream's name, or for a
   * stream named by ARN by its partition, region, account and name, so that streams of one name in two accounts keep
   * apart.
   */
  def ownerFileName(stream: String): String = StreamRef.arnOf(stream).fold(legacyOwnerFileName(stream)) { arn =>
    s"$OwnerFilePrefix${arn.partition}-${arn.region}-${arn.account}-${arn.streamName}"
  }

  /** How every such file's name starts, whichever stream and release wrote it. */
  val OwnerFilePrefix = "efo-consumer-"

  /**
   * The checkpoint's file that records a consumer the query reads through for `stream` without having registered it.
   */
  def readerFileName(stream: String): String = ReaderFilePrefix + ownerFileName(stream).stripPrefix(OwnerFilePrefix)

  /** How every reader file's name starts. */
  val ReaderFilePrefix = "efo-reader-"

  /** The file name of a stream by its name alone: every stream's in releases before 0.2.0. */
  private def legacyOwnerFileName(stream: String): String = s"$OwnerFilePrefix${StreamRef.nameOf(stream)}"
}
