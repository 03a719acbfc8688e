package io.github.sparkkinesis.source.realtime

/** How much of its task's fetch budget a shard's next page may hold: data bytes and rows. */
private[realtime] final case class FetchShare(bytes: Long, rows: Long)

/**
 * What the pages a real-time task's feeds have fetched and not yet queued may hold together: `bytes` of record data and
 * `rows`. Half of it is shared equally among the task's `feeds()`, and always theirs; the other half is lent, a page at
 * a time, to the feeds that call Kinesis while it is free, up to [[FetchBudget.LoanBytes]] each (and rows in the same
 * proportion). So a few busy shards of a task of many read large pages, and call Kinesis less often for the same rate,
 * while the equal shares and the loans add up to the budget. A page is asked for within its reservation, judged by its
 * shard's average record, so it passes it only where one record is larger than the share or records suddenly grow.
 */
private[realtime] final class FetchBudget(bytes: Long, rows: Long, feeds: () => Int) {
  private var lentBytes = 0L
  private var lentRows = 0L

  /** The equal share of one feed, which it may always hold without borrowing. */
  def equalShare: FetchShare = {
    val n = 2L * math.max(1, feeds())
    FetchShare(bytes / n, rows / n)
  }

  /**
   * Reserves the next page's share (its equal share, plus what the free half lends it, up to a whole loan), runs
   * `fetch` with it, and gives the share back once `fetch` returns: `fetch` makes the call (with its retries) and hands
   * the page's records over before it returns. A feed behind its shard's tip waits up to `waitMs` for a whole loan,
   * since loans come back once their pages are queued, milliseconds after their call while the task keeps up: a page of
   * its equal share alone would carry little of its shard's rate.
   */
  def holding[T](waitMs: Long)(fetch: FetchShare => T): T = {
    val (share, loan) = reserve(waitMs)
    try fetch(share)
    finally giveBack(loan)
  }

  private def reserve(waitMs: Long): (FetchShare, FetchShare) = synchronized {
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
    (FetchShare(own.bytes + loan.bytes, own.rows + loan.rows), loan)
  }

  private def giveBack(loan: FetchShare): Unit = synchronized {
    lentBytes -= loan.bytes
    lentRows -= loan.rows
    notifyAll()
  }
}

private[realtime] object FetchBudget {

  /**
   * The most a page borrows: two seconds of a shard's read limit, so four feeds of a task borrow at once, each page
   * carries the shard's whole rate at a call every two seconds (Kinesis allows five a second), and a task of one shard
   * still reads Kinesis' 10-MiB pages (its equal share alone holds them). Measured at 200 shards on two tasks
   * (`bench/run --only limits`): 2.10 MiB/s per shard, with a call every 1.5 s.
   */
  val LoanBytes: Long = 4L << 20

  /**
   * How long a feed behind its shard's tip waits for a whole loan: loans come back within milliseconds while the task's
   * consumer keeps up and Kinesis answers at once, so the wait runs out only when the consumer lags (then a smaller
   * page costs nothing) or the borrowers' calls are throttled and back off holding their loans.
   */
  val LoanWaitMs: Long = 200L
}
