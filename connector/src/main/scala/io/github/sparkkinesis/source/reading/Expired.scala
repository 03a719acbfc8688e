package io.github.sparkkinesis.source.reading

/** What of a batch planned before a restart retention has trimmed since, as the driver found when planning it again. */
sealed trait Expired

object Expired {

  /** Every record the batch read of the shard, its recorded end included: the batch reads nothing there now. */
  case object Whole extends Expired

  /**
   * Its start lies behind the trim horizon: the batch reads what is left up to its recorded end, if any (Kinesis
   * resumes at the horizon), and goes on where the records it expects are missing.
   */
  case object Start extends Expired
}
