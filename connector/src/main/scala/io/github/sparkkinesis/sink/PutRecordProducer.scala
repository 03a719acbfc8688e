package io.github.sparkkinesis.sink

import java.util.concurrent.{ExecutorService, Executors, ThreadFactory}

import scala.util.control.NonFatal

import io.github.sparkkinesis.client.{Backoff, KinesisClientException, SinkClient, ThrottledException}

/**
 * [[RecordProducer]] on PutRecord calls through the connector's own client, one record per call on `threads` daemon
 * threads: the way for records too large for the Kinesis Producer Library (see [[RoutingProducer]], which also keeps
 * their partition keys in order). Each call is answered once Kinesis has stored the record. A call that fails for a
 * passing reason ([[SinkFailures.passing]]: throttled, after the client's own retries, or failed on the way) is tried
 * again with back-off until `recordTtlMs` after the record was handed over; any other failure, or one past that, fails
 * the record.
 *
 * @param sleep
 *   waits between throttled attempts (tests pass one that returns at once)
 */
private[sink] final class PutRecordProducer(
    client: () => SinkClient,
    recordTtlMs: Long,
    backoff: () => Backoff,
    threads: Int,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep) extends StoppableProducer {

  private val pool: ExecutorService = Executors.newFixedThreadPool(
    threads,
    new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val thread = new Thread(r, "spark-kinesis-put-record")
        thread.setDaemon(true)
        thread
      }
    })

  override def send(record: OutgoingRecord, onDone: SendResult => Unit): Unit = {
    val deadline = SinkFailures.deadline(clock(), recordTtlMs)
    pool.execute(new Runnable {
      override def run(): Unit = onDone(write(record, deadline))
    })
  }

  /** Drops the records not yet written, as the KPL's destroy does: their tasks have not committed. */
  override def destroy(): Unit = pool.shutdownNow()

  private def write(record: OutgoingRecord, deadline: Long): SendResult = {
    val waits = backoff()
    var attempts = 0
    var result: Option[SendResult] = None
    while (result.isEmpty) {
      attempts += 1
      try {
        client().writeRecord(record.stream, record.partitionKey, record.explicitHashKey, record.data)
        result = Some(SendResult.Written(attempts))
      } catch {
        case e: KinesisClientException if SinkFailures.passing(e) && clock() < deadline =>
          sleep(math.min(waits.nextDelayMs(), math.max(0L, deadline - clock())))
        case e: ThrottledException =>
          result = Some(failed(
            record,
            attempts,
            s"Kinesis throttled it for longer than kinesis.sink.recordTtl " +
              s"($recordTtlMs ms): the stream's shards take 1 MiB per second each, larger records use up their burst " +
              s"allowance; add shards or raise kinesis.sink.recordTtl. The last error was: ${e.getMessage}"))
        case e: KinesisClientException if SinkFailures.passing(e) =>
          result = Some(failed(
            record,
            attempts,
            s"it was not written within kinesis.sink.recordTtl ($recordTtlMs ms). The last error was: ${e.getMessage}"))
        case e: InterruptedException =>
          result = Some(failed(record, attempts, "the executor's producer was stopped."))
        case NonFatal(e) =>
          result = Some(failed(record, attempts, String.valueOf(e.getMessage)))
      }
    }
    result.get
  }

  private def failed(record: OutgoingRecord, attempts: Int, why: String): SendResult =
    SinkFailures.failed(
      record,
      s"PutRecord (rows over ${RoutingProducer.KplMaxRecordBytes} bytes bypass the Kinesis Producer Library) after " +
        s"$attempts attempt(s)",
      why)
}
