package io.github.sparkkinesis.source.reading

import io.github.sparkkinesis.offsets.ShardPosition

/** The last record a batch read takes: the one with `sequenceNumber` when `inclusive`, else the one before it. */
final case class SequenceBound(sequenceNumber: String, inclusive: Boolean) {
  def admits(sequence: String): Boolean = {
    val order = ShardPosition.compareSequenceNumbers(sequence, sequenceNumber)
    order < 0 || (inclusive && order == 0)
  }
}
