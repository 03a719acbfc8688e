package io.github.sparkkinesis.source

import java.util.concurrent.{ArrayBlockingQueue, ExecutorService, Executors, ThreadFactory}

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader

/**
 * The rows of several readers, read at once, up to [[ParallelRows.MaxThreads]] at a time: a task's shards wait on
 * Kinesis in parallel instead of one after another. Rows come in chunks through a queue, so what a task holds stays
 * bounded by its threads, not its shards: a chunk is at most 1,000 rows and 1 MiB of data, or one larger row alone
 * (Kinesis records reach 10 MiB), and the queue holds at most `threads + 2` chunks and `threads + 2` MiB of data,
 * or one larger chunk alone. So the data waiting in this reader is at most max(`threads + 2` MiB, one row) queued,
 * plus what each thread holds: the chunk it fills (at most 1 MiB, or one row) and its reader's last page. A reader's
 * failure fails the task. Every reader has been read to its end when `next()` first returns false.
 */
private[source] final class ParallelRows(readers: Seq[PartitionReader[InternalRow]], name: String)
  extends PartitionReader[InternalRow] {
  import ParallelRows._

  private val threads = math.min(readers.size, MaxThreads)
  private val queue = new ArrayBlockingQueue[Chunk](threads + 2)
  private val queued = new QueuedBytes((threads + 2) * ChunkBytes)
  @volatile private var closed = false
  private val pool: ExecutorService = Executors.newFixedThreadPool(threads, new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val thread = new Thread(r, s"kinesis-read $name")
      thread.setDaemon(true)
      thread
    }
  })
  readers.foreach(reader => pool.execute(new Runnable { override def run(): Unit = drain(reader) }))
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
        case Done          => readersDone += 1
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
    pool.shutdownNow()
    readers.foreach(_.close())
  }

  private def drain(reader: PartitionReader[InternalRow]): Unit =
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
      case e: Throwable           =>
        try queue.put(Failed(e)) catch { case _: InterruptedException => () }
    }
}

private object ParallelRows {
  /** Shards of a task read at once; a task with more reads the others as these finish. */
  val MaxThreads = 8
  val ChunkRows = 1000
  val ChunkBytes: Long = 1L << 20

  sealed trait Chunk
  final case class Rows(rows: Array[InternalRow], bytes: Long) extends Chunk
  case object Done extends Chunk
  final case class Failed(cause: Throwable) extends Chunk

  /** The data of the chunks in the queue: at most `max` bytes, unless a single chunk is larger on its own. */
  final class QueuedBytes(max: Long) {
    private var bytes = 0L // guarded by this
    private var highest = 0L // guarded by this

    /** Waits (interruptibly) until `size` more bytes fit, or the queue holds no data at all. */
    def take(size: Long): Unit = synchronized {
      while (bytes > 0 && bytes + size > max) wait()
      bytes += size
      highest = math.max(highest, bytes)
    }

    def giveBack(size: Long): Unit = synchronized {
      bytes -= size
      notifyAll()
    }

    def peak: Long = synchronized(highest)
  }
}
