package io.github.sparkkinesis.tools

import java.io.IOException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path, PathFilter}

import io.github.sparkkinesis.client.{
  ConsumerDescription,
  ConsumerTags,
  FanOutClient,
  KinesisClientException,
  ResourceMissingException
}
import io.github.sparkkinesis.metadata.AtomicFiles
import io.github.sparkkinesis.source.planning.{ConsumerRecords, FanOutConsumer}

/** Whether a query's checkpoint holds a stream consumer, as the consumers tool judges it. */
sealed abstract class Holding(val name: String, val reason: String)

object Holding {

  /** No `spark-kinesis/` tags: an administrator's, another application's, or registered before tags existed. */
  case object NotOurs
      extends Holding("not-ours", "not registered by spark-kinesis (no spark-kinesis/ tags): left alone")

  /** Registered by the connector, but its tags name no checkpoint (the location was too long for them). */
  case object UnknownCheckpoint
      extends Holding("unknown", "registered by spark-kinesis, but its tags name no checkpoint: left alone")

  /** The checkpoint's fan-out consumer file names it: the query that writes there reads through it. */
  final case class Held(file: String) extends Holding("held", s"held: $file records it")

  /** The checkpoint is gone, or records another consumer: no query of that checkpoint reads through it any more. */
  final case class NotHeld(why: String) extends Holding("not-held", why)

  /** The checkpoint could not be read (a file system not on the class path, refused access): left alone. */
  final case class Unreadable(why: String) extends Holding("unreadable", s"checkpoint not readable: $why; left alone")
}

/** One consumer of a stream as Kinesis lists it, the checkpoint its tags name, and whether that checkpoint holds it. */
final case class ConsumerEntry(consumer: ConsumerDescription, checkpoint: Option[String], holding: Holding)

/**
 * The consumers of a stream and which query holds each: a consumer the connector registered carries tags naming the
 * checkpoint of the query that registered it, or of the latest query that reuses it by name ([[ConsumerTags]]), and
 * that checkpoint records the consumer the query reads through in a file `efo-consumer-*` or `efo-reader-*`
 * ([[FanOutConsumer]]) for as long as it does. Pruning deregisters the connector's consumers no checkpoint holds;
 * everything else (others' consumers, unreadable checkpoints) is left alone.
 */
final class ConsumerInventory(client: FanOutClient, hadoopConf: Configuration, clock: () => Long) {

  /** Every consumer of `stream` (a name or an ARN), in the order Kinesis lists them. */
  def entries(stream: String): Seq[ConsumerEntry] =
    client.listConsumers(client.streamArn(stream)).flatMap { consumer =>
      val tags =
        try Some(client.consumerTags(consumer.arn))
        catch { case _: ResourceMissingException => None } // deregistered since it was listed
      tags.map { t =>
        val checkpoint = ConsumerTags.checkpointOf(t)
        val holding =
          if (!ConsumerTags.registeredByConnector(t)) Holding.NotOurs
          else checkpoint.fold[Holding](Holding.UnknownCheckpoint)(holdingOf(_, consumer.arn))
        ConsumerEntry(consumer, checkpoint, holding)
      }
    }

  /**
   * The entries to deregister: the connector's, held by no checkpoint, ACTIVE (one being created may not be recorded
   * yet, one being deleted is on its way) and created at least `olderThanMs` ago.
   */
  def prunable(entries: Seq[ConsumerEntry], olderThanMs: Long): Seq[ConsumerEntry] = entries.filter { e =>
    e.holding.isInstanceOf[Holding.NotHeld] && e.consumer.isActive &&
    clock() - e.consumer.createdAtMillis >= olderThanMs
  }

  /** Deregisters the consumer of `entry`; None when done, else why not. */
  def deregister(entry: ConsumerEntry): Option[String] =
    try {
      client.deregisterConsumer(entry.consumer.arn)
      None
    } catch { case e: KinesisClientException => Some(e.getMessage) }

  private def holdingOf(checkpoint: String, consumerArn: String): Holding =
    try {
      val dir = new Path(checkpoint)
      val fs = dir.getFileSystem(hadoopConf)
      if (!fs.exists(dir)) Holding.NotHeld(s"not held: checkpoint $checkpoint no longer exists")
      else {
        val owners = fs.listStatus(
          dir,
          new PathFilter {
            override def accept(p: Path): Boolean =
              Seq(ConsumerRecords.OwnerFilePrefix, ConsumerRecords.ReaderFilePrefix).exists(p.getName.startsWith)
          })
        owners.map(_.getPath).find(p => AtomicFiles.read(p, hadoopConf).map(_.trim).contains(consumerArn))
          .fold[Holding](Holding.NotHeld(s"not held: checkpoint $checkpoint records no longer this consumer"))(p =>
            Holding.Held(p.toString))
      }
    } catch {
      case e: IOException => Holding.Unreadable(s"${e.getClass.getSimpleName}: ${e.getMessage}")
      case e: IllegalArgumentException => Holding.Unreadable(e.getMessage) // not a path Hadoop can parse
    }
}
