package io.github.sparkkinesis.source.realtime

import org.apache.hadoop.conf.Configuration

import io.github.sparkkinesis.client.{ClientSettings, KinesisClient}
import io.github.sparkkinesis.options.KinesisSourceOptions
import io.github.sparkkinesis.source.KinesisMicroBatchStream

/** What a query's stream is built from ([[KinesisMicroBatchStream]]'s parameters), whichever Spark runs it. */
final case class StreamArgs(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    hadoopConf: Configuration,
    clients: ClientSettings => KinesisClient,
    parallelism: () => Int,
    metadataOnExecutorDisks: Boolean,
    executors: () => IndexedSeq[String]) {

  /** The micro-batch-only stream, for a Spark without real-time mode. */
  def microBatchStream: KinesisMicroBatchStream = new KinesisMicroBatchStream(
    options,
    checkpointLocation,
    hadoopConf,
    clients,
    parallelism,
    metadataOnExecutorDisks = metadataOnExecutorDisks,
    executors = executors)
}
