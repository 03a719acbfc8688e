package io.github.sparkkinesis.tools

import com.fasterxml.jackson.databind.JsonNode

import io.github.sparkkinesis.offsets.Json
import io.github.sparkkinesis.options.ToolOptions
import io.github.sparkkinesis.tools.ConsumersCli.{instant, Command}

/**
 * What `consumers list|prune` prints: every consumer with its holding, then for prune each consumer to deregister with
 * what was done (`would-deregister` in a dry run, `deregistered`, or `failed` with the error), as text or JSON.
 */
private[tools] final class ConsumersReport(
    command: Command,
    entries: Seq[ConsumerEntry],
    pruned: Seq[(ConsumerEntry, Option[String])]) {

  private def action(failure: Option[String]): String =
    if (!command.apply) "would-deregister" else if (failure.isEmpty) "deregistered" else "failed"

  def text: String = {
    val lines = Vector.newBuilder[String]
    lines += s"Stream ${command.stream}: ${entries.size} consumer${if (entries.size == 1) "" else "s"}"
    entries.foreach { e =>
      val c = e.consumer
      lines += s"  ${c.name}  ${c.status}  created ${instant(c.createdAtMillis)}  ${c.arn}"
      lines += s"      ${e.holding.reason}"
    }
    if (command.prune) {
      val older = s"registered at least ${ToolOptions.showDuration(command.olderThanMs)} ago"
      if (pruned.isEmpty)
        lines += s"Nothing to prune: no ACTIVE consumer of spark-kinesis $older is held by no checkpoint."
      else if (!command.apply)
        lines += s"Would deregister ${pruned.size} (a dry run: nothing changed; add --yes to deregister):"
      else lines += s"Deregistering ${pruned.size}:"
      pruned.foreach { case (e, failure) =>
        lines += s"  ${action(failure)} ${e.consumer.name} (${e.consumer.arn})" + failure.fold("")(f => s": $f")
      }
    }
    lines.result().mkString("\n")
  }

  def json: JsonNode = {
    val consumers = entries.map { e =>
      Json.obj(
        Seq(
          "name" -> Json.text(e.consumer.name),
          "arn" -> Json.text(e.consumer.arn),
          "status" -> Json.text(e.consumer.status),
          "createdAt" -> Json.text(instant(e.consumer.createdAtMillis)),
          "holding" -> Json.text(e.holding.name),
          "reason" -> Json.text(e.holding.reason)) ++ e.checkpoint.map("checkpoint" -> Json.text(_)): _*)
    }
    val actions = pruned.map { case (e, failure) =>
      Json.obj(
        Seq("arn" -> Json.text(e.consumer.arn), "action" -> Json.text(action(failure))) ++
          failure.map("error" -> Json.text(_)): _*)
    }
    Json.obj(
      Seq("stream" -> Json.text(command.stream), "consumers" -> Json.arrayOf(consumers)) ++
        (if (command.prune) Seq("prune" -> Json.arrayOf(actions), "dryRun" -> Json.bool(!command.apply)) else Nil): _*)
  }
}
