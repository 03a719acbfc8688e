package io.github.sparkkinesis.source.realtime

import scala.util.Try

import io.github.sparkkinesis.source.KinesisMicroBatchStream

/**
 * The stream a query gets on Spark 4: on 4.1 and later one that also runs in real-time mode
 * ([[KinesisRealTimeStream]]); on 4.0, which has no real-time mode (and no `Trigger.RealTime` to ask for it), the
 * micro-batch stream, and the real-time classes, which need 4.1's interfaces, are never loaded.
 */
object RealTimeSupport {

  /** Whether this Spark has real-time mode (4.1 and later). */
  lazy val available: Boolean =
    Try(Class.forName("org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode")).isSuccess

  def stream(args: StreamArgs): KinesisMicroBatchStream =
    if (available) RealTimeStreams.create(args) else args.microBatchStream
}

/** Kept apart from [[RealTimeSupport]], so that loading that never loads the real-time classes. */
private object RealTimeStreams {
  def create(args: StreamArgs): KinesisMicroBatchStream = new KinesisRealTimeStream(args)
}
