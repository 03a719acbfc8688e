package io.github.sparkkinesis.bench

/**
 * The sink part's rows and writers: how many rows each write puts, their shape, and the streams they go to.
 *
 * @param rows
 *   rows of the raw client's write and of the sink's write without aggregation
 * @param primeRows
 *   rows of the untimed write before each timed sink write, into the same stream
 * @param aggregatedRows
 *   rows of the sink's write with aggregation, which packs hundreds of rows into one Kinesis record and so can write
 *   many more in the same time
 * @param options
 *   connector options for the sink's writes, over the endpoint, credentials and aggregation
 * @param latencyRowsPerSecond
 *   the pace of the streaming-latency part's writers (Spark's rate source, raw client)
 */
final case class SinkConfig(
    shards: Int = 40,
    rows: Int = 20000,
    aggregatedRows: Int = 200000,
    payloadBytes: Int = 100,
    keys: Int = 10000,
    partitions: Int = 4,
    rawThreads: Int = 4,
    primeRows: Int = 2000,
    options: Map[String, String] = SinkConfig.DefaultOptions,
    latencyShards: Int = 40,
    latencyRowsPerSecond: Int = 1000,
    latencySeconds: Int = 30,
    latencyWarmUpSeconds: Int = 10) {

  def check(): Unit = {
    require(
      shards > 0 && rows > 0 && aggregatedRows > 0 && keys > 0 && partitions > 0 && rawThreads > 0,
      "--sink-* counts must be positive")
    require(primeRows >= 0, "--sink-prime-rows must not be negative")
    require(
      latencyShards > 0 && latencyRowsPerSecond > 0 && latencySeconds > 0 && latencyWarmUpSeconds >= 0,
      "--sink-latency-* counts must be positive (the warm-up may be 0)")
    require(
      payloadBytes >= SinkRows.MinPayloadBytes && payloadBytes <= 1024 * 1024,
      s"--sink-payload-bytes must be from ${SinkRows.MinPayloadBytes} (room for the row's number) to 1048576")
  }
}

object SinkConfig {

  /**
   * The emulator slows down as its shards fill, and the KPL fails a row it has not written within its TTL (30 s by
   * default), which in `local[2]` (no task retries) fails the write: the benchmark measures throughput, not a TTL, so
   * it gives rows five minutes.
   */
  val DefaultOptions: Map[String, String] = Map("kinesis.sink.recordTtl" -> "300000")
}
