package io.github.sparkkinesis.source.reading

import java.util.concurrent.{ArrayBlockingQueue, ExecutorService, Executors, ThreadFactory, TimeUnit}

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.slf4j.LoggerFactory

/**
 * The rows of several readers, all read at once, each on a thread of its own: a task's shards wait on Kinesis (and on
 * their shard's read limit) in parallel, none idle while another is read. Rows come in chunks through a queue, so what
 * a task holds stays bounded by its shards: a chunk is at most 1,000 rows and 1 MiB of data, or one larger row alone
 * (Kinesis records reach 10 MiB), and the queue holds at most `threads + 2` chunks and `threads + 2` MiB of data, or
 * one larger chunk alone. So the data waiting in this reader is at most max(`threads + 2` MiB, one row) queued, plus
 * what each thread holds: the chunk it fills (at most 1 MiB, or one row) and its reader's last page (a micro-batch
 * task's pages share one [[FetchBudget]]). A reader's failure fails the task. Every reader has been read to its end
 * when `next()` first returns false.
 *
 * Closing (also of a task cut short: a `limit`, a killed or failed task) interrupts the readers still reading and waits
 * up to `closeWaitMs` for their threads; a reader is closed only once no thread reads it, by [[close]] or, if it is
 * still reading then, by its own thread when it stops. So a reader never sees its close in the middle of a page.
 */
private[source] final class ParallelRows(
    readers: Seq[PartitionReader[InternalRow]],
    name: String,
    closeWaitMs: Long = ParallelRows.CloseWaitMs)
    extends PartitionReader[InternalRow] {
  import ParallelRows._

  private val log = LoggerFactory.getLogger(getClass)

  private val threads = readers.size
  private val queue = new ArrayBlockingQueue[Chunk](threads + 2)
  private val queued = new QueuedBytes((threads + 2) * ChunkBytes)
  @volatile private var closed = false
  private val pool: ExecutorService = Executors.newFixedThreadPool(
    threads,
    new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val thread = new Thread(r, s"kinesis-read $name")
        thread.setDaemon(true)
        thread
      }
    })
  private val slots = readers.map(new Slot(_))
  slots.foreach(slot => pool.execute(new Runnable { override def run(): Unit = drain(slot) }))
  private var readersDone = 0
  private var chunk: Array[InternalRow] = Array.empty
  private var index = -1

  override def next(): Boolean = {
    index += 1
    while (index >= chunk.length && readersDone < readers.size) {
      queue.take() match {
        case Rows(rows, bytes) =>
          queued.giveBack(bytes)
          chunk = rows
          index = 0
        case Done => readersDone += 1
        case Failed(cause) => throw cause
      }
    }
    index < chunk.length
  }

  override def get(): InternalRow = chunk(index)

  /** The most data the queue has held at once, for tests of the bound. */
  private[source] def peakQueuedBytes: Long = queued.peak

  override def close(): Unit = {
    closed = true
    pool.shutdownNow() // interrupts the readers still reading; those not started yet never start
    // A killed task is closed on its interrupted thread: the wait must not end at once for that.
    val interrupted = Thread.interrupted()
    try {
      if (!pool.awaitTermination(closeWaitMs, TimeUnit.MILLISECONDS)) {
        log.warn(s"Reading $name: readers still busy $closeWaitMs ms after the task closed; each is closed (and its " +
          "enhanced fan-out subscription cancelled) when its Kinesis call returns.")
      }
    } catch {
      case _: InterruptedException => () // interrupted again: the readers close themselves as they stop
    } finally if (interrupted) Thread.currentThread().interrupt()
    slots.foreach(_.closeUnlessReading())
  }

  private def drain(slot: Slot): Unit = if (slot.start()) {
    val reader = slot.reader
    try {
      var rows = new ArrayBuffer[InternalRow]()
      var bytes = 0L
      def send(): Unit = {
        queued.take(bytes)
        queue.put(Rows(rows.toArray, bytes))
        rows = new ArrayBuffer[InternalRow]()
        bytes = 0L
      }
      while (reader.next()) {
        val row = reader.get()
        val size = row.getBinary(0).length
        if (rows.nonEmpty && bytes + size > ChunkBytes) send() // a large row goes in a chunk of its own
        rows += row
        bytes += size
        if (rows.size >= ChunkRows || bytes >= ChunkBytes) send()
      }
      if (rows.nonEmpty) send()
      queue.put(Done)
    } catch {
      case e: Throwable if closed => // the task was closed: nobody waits for these rows
      case e: Throwable =>
        try queue.put(Failed(e))
        catch { case _: InterruptedException => () }
    } finally slot.stop()
  }

  /**
   * One reader and whether a thread reads it. It is closed once, by whoever comes last: [[ParallelRows.close]] if no
   * thread reads it then, else its thread when that stops.
   */
  private final class Slot(val reader: PartitionReader[InternalRow]) {
    private var reading = false
    private var readerClosed = false

    /** Whether the reader may be read: not once the task is closed. */
    def start(): Boolean = synchronized {
      reading = !closed && !readerClosed
      reading
    }

    def stop(): Unit = synchronized {
      reading = false
      if (closed) {
        try closeOnce()
        catch { case NonFatal(e) => log.warn(s"Reading $name: closing a shard reader failed: ${e.getMessage}") }
      }
    }

    def closeUnlessReading(): Unit = synchronized(if (!reading) closeOnce())

    private def closeOnce(): Unit = if (!readerClosed) {
      readerClosed = true
      reader.close()
    }
  }
}

private[source] object ParallelRows {

  /** How long closing a task waits for its readers' threads to stop (a Kinesis call under way to return). */
  val CloseWaitMs = 10000L
  val ChunkRows = 1000
  val ChunkBytes: Long = 1L << 20

  sealed trait Chunk
  final case class Rows(rows: Array[InternalRow], bytes: Long) extends Chunk
  case object Done extends Chunk
  final case class Failed(cause: Throwable) extends Chunk

  /**
   * The data and rows of the chunks in a queue: at most `max` bytes and `maxRows` rows, unless a single chunk is larger
   * on its own.
   */
  final class QueuedBytes(max: Long, maxRows: Long = Long.MaxValue) {
    private var bytes = 0L // guarded by this
    private var rows = 0L // guarded by this
    private var highest = 0L // guarded by this
    private var highestRows = 0L // guarded by this

    /** Waits (interruptibly) until `size` more bytes and `count` more rows fit, or the queue holds nothing at all. */
    def take(size: Long, count: Long = 0L): Unit = synchronized {
      while ((bytes > 0 || rows > 0) && (bytes + size > max || rows + count > maxRows)) wait()
      bytes += size
      rows += count
      highest = math.max(highest, bytes)
      highestRows = math.max(highestRows, rows)
    }

    def giveBack(size: Long, count: Long = 0L): Unit = synchronized {
      bytes -= size
      rows -= count
      notifyAll()
    }

    def peak: Long = synchronized(highest)

    /** The most rows queued at once. */
    def peakRows: Long = synchronized(highestRows)
  }
}
