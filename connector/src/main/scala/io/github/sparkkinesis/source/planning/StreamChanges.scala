package io.github.sparkkinesis.source.planning

import org.slf4j.LoggerFactory

import io.github.sparkkinesis.offsets.ShardState

/** A restarted query's list of streams against the streams its checkpoint tracks. */
private[source] object StreamChanges {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * The shards to track per stream: a stream added to the list starts at `kinesis.startingPosition`; a stream no longer
   * listed is refused, or forgotten when `allowRemoval`. Also whether anything changed, so the change is recorded in
   * the next offset at once.
   */
  def apply(
      checkpointed: Map[String, Map[String, ShardState]],
      planners: Map[String, StreamPlanner],
      allowRemoval: Boolean): (Map[String, Map[String, ShardState]], Boolean) = {
    val removed = checkpointed.keySet.diff(planners.keySet).toSeq.sorted
    if (removed.nonEmpty && !allowRemoval) {
      throw new IllegalStateException(s"The checkpoint reads stream(s) ${removed.mkString(", ")} that options " +
        "kinesis.streamName and kinesis.streamARN no longer list. Add them back, or set " +
        "kinesis.allowStreamRemoval=true to stop reading them (their positions are then forgotten).")
    }
    removed.foreach(s =>
      log.warn(s"Stream $s is no longer listed: the query stops reading it and forgets its " +
        "positions (kinesis.allowStreamRemoval=true)."))
    val added = planners.keySet.diff(checkpointed.keySet).toSeq.sorted
    added.foreach(s => log.info(s"Stream $s is new to this query: reading it from kinesis.startingPosition."))
    val streams = (checkpointed -- removed) ++ added.map(s => s -> planners(s).initialShards())
    (streams, removed.nonEmpty || added.nonEmpty)
  }
}
