package io.github.sparkkinesis.source.realtime

import io.github.sparkkinesis.source.planning.TaskPlan

/**
 * What one real-time batch has of the cluster: `slots` tasks can run at once (each executor's cores divided by
 * `spark.task.cpus`, `taskCpus` as configured), and the batch's shuffle stages, which real-time mode runs at the same
 * time as the source's tasks, take `shuffles` of them (each shuffle's partitions, in plan order: a stateful operator's
 * are `spark.sql.shuffle.partitions` as the query's checkpoint fixed it at its first run).
 */
final case class BatchSlots(slots: Int, taskCpus: String, shuffles: Seq[Int]) {

  /** The slots the batch's stages after the source take. */
  def downstream: Int = shuffles.sum
}

object BatchSlots {

  /** A cluster of `cores` cores, one per task, running a batch without shuffles (a stateless query). */
  def stateless(cores: Int): BatchSlots = BatchSlots(cores, "1", Nil)
}

/**
 * How many tasks a real-time batch's source runs. Spark starts every stage of a real-time batch at once and refuses a
 * batch whose tasks outnumber the free slots, so the source takes only what the batch's shuffle stages leave:
 * `kinesis.realTime.maxTasks` (`maxTasks`) tasks when given, else one per `shardsPerTask` readable shards and at least
 * one per free slot while there are enough shards, never more than the free slots.
 */
final case class RealTimeTasks(shardsPerTask: Int, maxTasks: Option[Int], slots: BatchSlots) {

  /** The task count for `readable` shards; fails, saying what to change, where the batch cannot fit the cluster. */
  def count(readable: Int): Int =
    if (readable == 0) 0
    else {
      val free = slots.slots - slots.downstream
      val tasks =
        maxTasks.fold(TaskPlan.taskCountAtOnce(readable, shardsPerTask, free))(math.min(_, readable))
      val atLeastOne = math.max(1, tasks)
      if (atLeastOne + slots.downstream > slots.slots) throw new IllegalStateException(tooSmall(readable, atLeastOne))
      atLeastOne
    }

  private def tooSmall(readable: Int, tasks: Int): String = {
    val source = s"$tasks Kinesis task${if (tasks == 1) "" else "s"} reading $readable shards" +
      maxTasks.fold("")(m => s" (kinesis.realTime.maxTasks=$m)")
    val shuffles =
      if (slots.shuffles.isEmpty) "no shuffle stage"
      else
        s"${slots.downstream} tasks of its ${slots.shuffles.size} shuffle stages (${slots.shuffles.mkString(" + ")}" +
          " partitions; a stateful operator has spark.sql.shuffle.partitions of them, fixed by the checkpoint at the " +
          "query's first run)"
    s"A real-time batch needs ${tasks + slots.downstream} task slots at once, but the cluster has ${slots.slots} " +
      s"(its cores divided by spark.task.cpus=${slots.taskCpus}): $source, and $shuffles. Real-time mode runs all of " +
      "a batch's stages at once. Lower spark.sql.shuffle.partitions (for a stateful query: before its first run, " +
      "with a new checkpoint location), lower kinesis.realTime.maxTasks, or give the cluster more cores."
  }
}
