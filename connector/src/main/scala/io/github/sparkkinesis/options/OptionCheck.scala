package io.github.sparkkinesis.options

import com.fasterxml.jackson.databind.JsonNode

import io.github.sparkkinesis.offsets.Json

/**
 * What an option accepts, as data: [[Parsers]] check values by it, and [[OptionsDocs]] writes it into the JSON
 * description so that another language's option builder (python/) checks the same thing and gives the same
 * reason without a JVM. A value is trimmed as `String.trim` does before it is checked. Regular expressions here
 * use only syntax Java and Python read alike (classes of ASCII characters, groups, alternation, quantifiers).
 * [[OptionCheck.ConnectorOnly]] is what the description cannot express: only the connector checks it.
 */
sealed abstract class OptionCheck(val kind: String) {

  /** The check's parameters and reasons, as the JSON fields next to `kind`. */
  def fields: Seq[(String, JsonNode)]

  final def json: JsonNode = Json.obj(("kind" -> Json.text(kind)) +: fields: _*)
}

object OptionCheck {

  /** Any text but the empty one. */
  case object NonEmpty extends OptionCheck("nonEmpty") {
    val empty = "the value is empty"
    def fields: Seq[(String, JsonNode)] = Seq("empty" -> Json.text(empty))
  }

  /** One of `values`, in any case; a value of `refused` (any case) is refused with its own reason. */
  final case class OneOf(
      values: Seq[String],
      refused: Seq[(String, String)] = Nil,
      notOne: String = "it is not one of the accepted values") extends OptionCheck("oneOf") {
    def fields: Seq[(String, JsonNode)] = Seq(
      "values" -> Json.array(values), "notOne" -> Json.text(notOne),
      "refused" -> Json.obj(refused.map { case (v, why) => v -> Json.text(why) }: _*))
  }

  val Bool: OneOf = OneOf(Seq("true", "false"), notOne = "it is not a boolean")

  /** A whole number within `min..max`, written as `syntax` matches. */
  final case class Whole(min: Long, max: Long) extends OptionCheck("whole") {
    val syntax = "[+-]?[0-9]+"
    val notWhole = "it is not a whole number"
    val outside = s"it is outside $min..$max"
    def fields: Seq[(String, JsonNode)] = Seq(
      "min" -> Json.number(min), "max" -> Json.number(max), "syntax" -> Json.text(syntax),
      "notWhole" -> Json.text(notWhole), "outside" -> Json.text(outside))
  }

  /** A duration up to `maxMs` (written `maxText`): a number and a unit of `UnitsMs`, in any case; no unit is ms. */
  final case class Duration(maxMs: Long, maxText: String) extends OptionCheck("duration") {
    import Duration._
    val notDuration = "it is not a duration"
    val longer = s"it is longer than $maxText"
    def fields: Seq[(String, JsonNode)] = Seq(
      "maxMs" -> Json.number(maxMs), "syntax" -> Json.text(Syntax),
      "unitsMs" -> Json.obj(UnitsMs.map { case (u, ms) => u -> Json.number(ms) }: _*),
      "notDuration" -> Json.text(notDuration), "longer" -> Json.text(longer))
  }

  object Duration {
    val UnitsMs: Seq[(String, Long)] = Seq("ms" -> 1L, "s" -> 1000L, "m" -> 60000L, "min" -> 60000L, "h" -> 3600000L)
    val Syntax: String = s"([0-9]+) *(${UnitsMs.map(_._1).mkString("|")})?"
  }

  /** Text that `regex` matches whole, else refused with `problem`. */
  final case class Matches(regex: String, problem: String) extends OptionCheck("matches") {
    def fields: Seq[(String, JsonNode)] = Seq("regex" -> Json.text(regex), "problem" -> Json.text(problem))
  }

  /** A URL starting with one of `prefixes` (any case); the rest of its grammar only the connector checks. */
  final case class Url(prefixes: Seq[String]) extends OptionCheck("url") {
    val noPrefix = s"it does not start with ${prefixes.mkString(" or ")}"
    def fields: Seq[(String, JsonNode)] = Seq("prefixes" -> Json.array(prefixes), "noPrefix" -> Json.text(noPrefix))
  }

  /** Checked by the connector alone, when the DataFrame is created. */
  case object ConnectorOnly extends OptionCheck("connectorOnly") {
    def fields: Seq[(String, JsonNode)] = Nil
  }
}
