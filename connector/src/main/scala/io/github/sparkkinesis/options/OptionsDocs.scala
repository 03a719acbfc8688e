package io.github.sparkkinesis.options

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import io.github.sparkkinesis.ConnectorVersion
import io.github.sparkkinesis.offsets.Json

/**
 * Renders the options registry for people and other languages: the options table of docs/options.md and its sections on
 * migrating from other connectors (each between the markers below), and a JSON description for other languages' option
 * builders. `main(pagePath)` rewrites the page's generated parts in place (by default docs/options.md, as the
 * `updateOptionsDocs` task does); `main("--json", path)` writes the JSON description.
 */
object OptionsDocs {
  val Begin = "<!-- options-table:begin (generated from KinesisOptionsRegistry; do not edit by hand) -->"
  val End = "<!-- options-table:end -->"
  val MigrationBegin = "<!-- migration:begin (generated from KinesisOptionsRegistry.aliases; do not edit by hand) -->"
  val MigrationEnd = "<!-- migration:end -->"

  private def cell(s: String) = s.replace("|", "\\|")

  /** The aliases that set `option`, as the table shows them: `streamName` (qubole/roncemer, Databricks). */
  def aliasesOf(option: OptionSpec[_]): Seq[OptionAlias] = KinesisOptionsRegistry.aliases.filter(_.effect match {
    case AliasEffect.Sets(target, _, _) => target == option.name
    case _ => false
  })

  def markdownTable: String = {
    val header = "| Option | Used by | Type | Default | Description | Other connectors' names |\n" +
      "|---|---|---|---|---|---|\n"
    header + KinesisOptionsRegistry.all.map { o =>
      s"| `${o.name}` | ${o.usage.name} | ${o.typeName} | ${o.defaultText.map(d => s"`$d`").getOrElse("")} | " +
        s"${cell(o.description)} | ${aliasesOf(o).map(a => s"`${a.name}` (${a.dialectNames})").mkString(", ")} |"
    }.mkString("\n") + "\n"
  }

  /** What each alias does here, in the words of the migration tables. */
  private def effectText(alias: OptionAlias): String = alias.effect match {
    case AliasEffect.NoEffect(why) => s"no effect (warning): $why"
    case AliasEffect.Sets(target, convert, differs) =>
      (Seq(s"`$target`") ++ Some(convert.what).filter(_.nonEmpty).map(w => s"($w)") ++
        differs.map(d => s"(warning: $d)")).mkString(" ")
  }

  /** One section per connector: each option name it documents that differs from ours, and what it does here. */
  def migrationSections: String = Dialect.all.map { dialect =>
    val rows = KinesisOptionsRegistry.aliases.filter(_.dialects.contains(dialect)).map(a =>
      s"| `${a.name}` | ${cell(effectText(a))} |")
    s"### Migrating from ${dialect.name} (format `${dialect.format}`)\n\n| Their option | Here |\n|---|---|\n" +
      rows.mkString("\n") + "\n"
  }.mkString("\n")

  private def replaceBetween(text: String, begin: String, end: String, content: String): String = {
    val from = text.indexOf(begin)
    val to = text.indexOf(end)
    require(from >= 0 && to > from, s"the options page has no markers $begin ... $end")
    text.substring(0, from + begin.length) + "\n" + content + text.substring(to)
  }

  /** The options page's text with its options table and migration sections replaced by the generated ones. */
  def withTable(page: String): String =
    replaceBetween(replaceBetween(page, Begin, End, markdownTable), MigrationBegin, MigrationEnd, migrationSections)

  /**
   * Every option as JSON (name, usage, type, default as written when there is one, description, accepted values,
   * secret, the aliases that set it, and `data`: what its parser checks that is pure data, an enum's members or a whole
   * number's range, with the reason it gives), and every alias name the connector accepts. Other languages' builders
   * take names, types and docs from it and leave every other check to the connector.
   */
  def json: String = {
    val options = KinesisOptionsRegistry.all.map { o =>
      Json.obj(Seq(
        "name" -> Json.text(o.name),
        "type" -> Json.text(o.typeName),
        "description" -> Json.text(o.description),
        "accepted" -> Json.text(o.accepted),
        "secret" -> Json.bool(o.secret),
        "usage" -> Json.text(o.usage.name),
        "data" -> Json.obj(o.parser.data: _*),
        "aliases" -> Json.arrayOf(aliasesOf(o).map(a =>
          Json.obj("name" -> Json.text(a.name), "dialects" -> Json.array(a.dialects.map(_.name)))))) ++
        o.defaultText.map(d => "default" -> Json.text(d)).toSeq: _*)
    }
    Json.write(Json.obj(
      "version" -> Json.number(3),
      "connectorVersion" -> Json.text(ConnectorVersion.value),
      "options" -> Json.arrayOf(options),
      "aliases" -> Json.array(KinesisOptionsRegistry.aliases.map(_.name))))
  }

  def main(args: Array[String]): Unit = args.toList match {
    case "--json" :: out :: Nil =>
      Files.write(Paths.get(out), json.getBytes(UTF_8))
      println(s"wrote the options description to $out")
    case pageArgs =>
      val path = Paths.get(pageArgs.headOption.getOrElse("docs/options.md"))
      val page = new String(Files.readAllBytes(path), UTF_8)
      Files.write(path, withTable(page).getBytes(UTF_8))
      println(s"wrote the options table into $path")
  }
}
