package io.github.sparkkinesis.options

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import io.github.sparkkinesis.ConnectorVersion
import io.github.sparkkinesis.offsets.Json

/**
 * Renders the options registry for people and other languages: the README's options table (between the
 * markers below) and a JSON description for other languages' option builders. `main(readmePath)` rewrites
 * the README's table in place; `main("--json", path)` writes the JSON description.
 */
object OptionsDocs {
  val Begin = "<!-- options-table:begin (generated from KinesisOptionsRegistry; do not edit by hand) -->"
  val End = "<!-- options-table:end -->"

  def markdownTable: String = {
    def cell(s: String) = s.replace("|", "\\|")
    val header = "| Option | Used by | Type | Default | Description |\n|---|---|---|---|---|\n"
    header + KinesisOptionsRegistry.all.map { o =>
      s"| `${o.name}` | ${o.usage.name} | ${o.typeName} | ${o.default.map(d => s"`$d`").getOrElse("")} | " +
        s"${cell(o.description)} |"
    }.mkString("\n") + "\n"
  }

  /** The README text with its options table replaced by the generated one. */
  def withTable(readme: String): String = {
    val begin = readme.indexOf(Begin)
    val end = readme.indexOf(End)
    require(begin >= 0 && end > begin, s"the README has no options table markers ($Begin ... $End)")
    readme.substring(0, begin + Begin.length) + "\n" + markdownTable + readme.substring(end)
  }

  /**
   * Every option as JSON (name, usage, type, default when there is one, description, accepted values, secret and
   * its [[OptionCheck]]), and the registry's [[OptionRule]]s across options.
   */
  def json: String = {
    val options = KinesisOptionsRegistry.all.map { o =>
      Json.obj(Seq(
        "name" -> Json.text(o.name), "type" -> Json.text(o.typeName), "description" -> Json.text(o.description),
        "accepted" -> Json.text(o.accepted), "secret" -> Json.bool(o.secret), "usage" -> Json.text(o.usage.name),
        "check" -> o.check.json) ++
        o.default.map(d => "default" -> Json.text(d)).toSeq: _*)
    }
    val array = Json.arrayOf(options)
    Json.write(Json.obj(
      "version" -> Json.number(2), "connectorVersion" -> Json.text(ConnectorVersion.value), "options" -> array,
      "rules" -> Json.arrayOf(KinesisOptionsRegistry.rules.map(_.json))))
  }

  def main(args: Array[String]): Unit = args.toList match {
    case "--json" :: out :: Nil =>
      Files.write(Paths.get(out), json.getBytes(UTF_8))
      println(s"wrote the options description to $out")
    case readmeArgs =>
      val path = Paths.get(readmeArgs.headOption.getOrElse("README.md"))
      val readme = new String(Files.readAllBytes(path), UTF_8)
      Files.write(path, withTable(readme).getBytes(UTF_8))
      println(s"wrote the options table into $path")
  }
}
