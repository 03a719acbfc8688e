package io.github.sparkkinesis.source.reading

/** How much of its task's fetch budget a shard's next page may hold: data bytes and rows. */
private[source] final case class FetchShare(bytes: Long, rows: Long) {

  /**
   * Records for a page within this share, in bytes and in rows, at a shard's average record `size` (at least one, at
   * most `most`).
   */
  def records(size: RecordSize, most: Int): Int = {
    val fit = math.min(bytes / size.bytes, (rows / size.rows).toLong)
    math.max(1L, math.min(most.toLong, fit)).toInt
  }
}

/**
 * What the pages a task's shard readers have fetched and not yet handed on may hold together: `bytes` of record data
 * and `rows`. Half of it is shared equally among the task's `readers()`, and always theirs; the other half is lent, a
 * page at a time, to the readers that call Kinesis while it is free, up to [[FetchBudget.LoanBytes]] each (and rows in
 * the same proportion). So a few busy shards of a task of many read large pages, and call Kinesis less often for the
 * same rate, while the equal shares and the loans add up to the budget. A page is asked for within its reservation,
 * judged by its shard's average record, so it passes it only where one record is larger than the share or records
 * suddenly grow.
 */
private[source] final class FetchBudget(bytes: Long, rows: Long, readers: () => Int) {
  import FetchBudget.Reservation

  private var lentBytes = 0L
  private var lentRows = 0L

  /** The equal share of one reader, which it may always hold without borrowing. */
  def equalShare: FetchShare = {
    val n = 2L * math.max(1, readers())
    FetchShare(bytes / n, rows / n)
  }

  /**
   * Reserves the next page's share (its equal share, plus what the free half lends it, up to a whole loan), runs
   * `fetch` with it, and gives the share back once `fetch` returns: `fetch` makes the call (with its retries) and hands
   * the page's records on before it returns.
   */
  def holding[T](waitMs: Long)(fetch: FetchShare => T): T = {
    val reservation = reserve(waitMs)
    try fetch(reservation.share)
    finally giveBack(reservation)
  }

  /**
   * Reserves the next page's share until [[giveBack]]. A reader behind its shard's tip waits up to `waitMs` for a whole
   * loan, since loans come back once their pages are handed on, milliseconds after their call while the task keeps up:
   * a page of its equal share alone would carry little of its shard's rate.
   */
  def reserve(waitMs: Long): Reservation = synchronized {
    val deadlineNs = System.nanoTime() + waitMs * 1000000L
    def wholeLoan = math.max(0L, FetchBudget.LoanBytes - equalShare.bytes)
    def leftMs = (deadlineNs - System.nanoTime()) / 1000000L
    while (lentBytes + wholeLoan > bytes / 2 && leftMs > 0) wait(leftMs)
    val own = equalShare
    val loanBytes = math.max(0L, math.min(wholeLoan, bytes / 2 - lentBytes))
    // Rows are lent in proportion to bytes, so that each of the feeds borrowing at once gets rows with its bytes.
    val loanRows = math.max(0L, math.min(rows / 2 - lentRows, (loanBytes.toDouble * rows / bytes).toLong))
    val loan = FetchShare(loanBytes, loanRows)
    lentBytes += loan.bytes
    lentRows += loan.rows
    Reservation(FetchShare(own.bytes + loan.bytes, own.rows + loan.rows), loan)
  }

  /**
   * Gives back the part of `reservation`'s loan that a page of `bytes` does not need, once the page has come: the
   * reservation then holds its equal share and at most the loan the page fills.
   */
  def keepOnly(reservation: Reservation, bytes: Long): Reservation = {
    val own =
      FetchShare(reservation.share.bytes - reservation.loan.bytes, reservation.share.rows - reservation.loan.rows)
    val keptBytes = math.min(reservation.loan.bytes, math.max(0L, bytes - own.bytes))
    if (keptBytes == reservation.loan.bytes) reservation
    else {
      val keptRows = if (reservation.loan.bytes == 0) 0L else reservation.loan.rows * keptBytes / reservation.loan.bytes
      val kept = FetchShare(keptBytes, keptRows)
      release(FetchShare(reservation.loan.bytes - kept.bytes, reservation.loan.rows - kept.rows))
      Reservation(FetchShare(own.bytes + kept.bytes, own.rows + kept.rows), kept)
    }
  }

  /** Gives a reservation's loan back, once its page has been handed on. */
  def giveBack(reservation: Reservation): Unit = release(reservation.loan)

  /** Returns `part` of the lent half, and wakes the readers waiting for a loan. */
  private def release(part: FetchShare): Unit = synchronized {
    lentBytes -= part.bytes
    lentRows -= part.rows
    notifyAll()
  }
}

private[source] object FetchBudget {

  /** A page's share, and the part of it lent from the budget's free half. */
  final case class Reservation(share: FetchShare, loan: FetchShare)

  /**
   * Most record data the pages of one task's shard readers hold fetched and not yet handed on: a task of one shard
   * reads Kinesis' full 10-MiB pages; one of 100 shards pages of at least 165 KiB, and of up to 4 MiB while the
   * budget's lending half is free: at the shards' 2 MiB/s, a call every one or two seconds.
   */
  val TaskBytes: Long = 32L << 20

  /** Most rows those pages hold together: at least 500 per shard at 100 shards. */
  val TaskRows: Long = 100000L

  /** A real-time task's budget, shared by its `readers()` shard feeds, whose pages' rows wait built in its queue. */
  def ofTask(readers: () => Int): FetchBudget = new FetchBudget(TaskBytes, TaskRows, readers)

  /**
   * A micro-batch task's budget, shared by its `readers()` shard readers: bytes only, since a reader builds a page's
   * rows one record at a time as they are taken.
   */
  def ofMicroBatchTask(readers: () => Int): FetchBudget = new FetchBudget(TaskBytes, Long.MaxValue / 4, readers)

  /**
   * The most a page borrows: two seconds of a shard's read limit, so four readers of a task borrow at once, each page
   * carries the shard's whole rate at a call every two seconds (Kinesis allows five a second), and a task of one shard
   * still reads Kinesis' 10-MiB pages (its equal share alone holds them). Measured at 200 shards on two tasks
   * (`bench/run --only limits`): 2.10 MiB/s per shard, with a call every 1.5 s.
   */
  val LoanBytes: Long = 4L << 20

  /**
   * How long a reader behind its shard's tip waits for a whole loan: loans come back within milliseconds while the
   * task's consumer keeps up and Kinesis answers at once, so the wait runs out only when the consumer lags (then a
   * smaller page costs nothing) or the borrowers' calls are throttled and back off holding their loans.
   */
  val LoanWaitMs: Long = 200L
}
