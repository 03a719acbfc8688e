package io.github.sparkkinesis.source

import java.util.concurrent.{ArrayBlockingQueue, ExecutorService, Executors, ThreadFactory}

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader

/**
 * The rows of several readers, read at once, up to [[ParallelRows.MaxThreads]] at a time: a task's shards wait on
 * Kinesis in parallel instead of one after another. Rows come in chunks of at most about 1 MiB through a queue of
 * a few chunks per thread, so what a task holds stays bounded by its threads, not its shards; a reader's failure
 * fails the task. Every reader has been read to its end when
 * `next()` first returns false.
 */
private[source] final class ParallelRows(readers: Seq[PartitionReader[InternalRow]], name: String)
  extends PartitionReader[InternalRow] {
  import ParallelRows._

  private val threads = math.min(readers.size, MaxThreads)
  private val queue = new ArrayBlockingQueue[Chunk](threads + 2)
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
        case Rows(rows)    => chunk = rows; index = 0
        case Done          => readersDone += 1
        case Failed(cause) => throw cause
      }
    }
    index < chunk.length
  }

  override def get(): InternalRow = chunk(index)

  override def close(): Unit = {
    closed = true
    pool.shutdownNow()
    readers.foreach(_.close())
  }

  private def drain(reader: PartitionReader[InternalRow]): Unit =
    try {
      var rows = new ArrayBuffer[InternalRow]()
      var bytes = 0L
      while (reader.next()) {
        val row = reader.get()
        rows += row
        bytes += row.getBinary(0).length
        if (rows.size >= ChunkRows || bytes >= ChunkBytes) {
          queue.put(Rows(rows.toArray))
          rows = new ArrayBuffer[InternalRow]()
          bytes = 0L
        }
      }
      if (rows.nonEmpty) queue.put(Rows(rows.toArray))
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
  final case class Rows(rows: Array[InternalRow]) extends Chunk
  case object Done extends Chunk
  final case class Failed(cause: Throwable) extends Chunk
}
