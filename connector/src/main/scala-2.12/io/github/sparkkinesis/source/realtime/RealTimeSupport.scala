package io.github.sparkkinesis.source.realtime

import io.github.sparkkinesis.source.KinesisMicroBatchStream

/** Spark 3.5 has no real-time mode (Spark 4.1 added it): every query gets the micro-batch stream. */
object RealTimeSupport {
  def stream(args: StreamArgs): KinesisMicroBatchStream = args.microBatchStream
}
