package io.github.sparkkinesis.options

import java.util.Locale

/** Which side of the connector reads an option: the source (reads), the sink (writes) or both. */
sealed abstract class OptionUsage(val name: String)

object OptionUsage {
  case object Source extends OptionUsage("source")
  case object Sink extends OptionUsage("sink")
  case object Both extends OptionUsage("both")
}

/**
 * One option of the connector: its name, type, default, description, check and whether the source, the sink
 * or both read it, in one place. `parse` turns the user's text into a value or into the sentence that says what
 * is accepted.
 */
final case class OptionSpec[T](
    name: String,
    typeName: String,
    default: Option[String],
    description: String,
    accepted: String,
    secret: Boolean = false,
    usage: OptionUsage = OptionUsage.Both)(val parse: String => Either[String, T]) {

  /** The case-insensitive key Spark hands us options under. */
  def key: String = name.toLowerCase(Locale.ROOT)

  /** Parses `raw`, failing with a message that names the option, echoes the value and says what is accepted. */
  def parseOrFail(raw: String): T = parse(raw.trim) match {
    case Right(value) => value
    case Left(problem) =>
      val shown = if (secret) "<redacted>" else s"'$raw'"
      throw new IllegalArgumentException(
        s"Invalid value $shown for option $name: $problem. Accepted: $accepted.")
  }
}

/** Parsers shared by the options registry; each returns the reason a value is not accepted. */
private[options] object Parsers {

  def string(raw: String): Either[String, String] =
    if (raw.isEmpty) Left("the value is empty") else Right(raw)

  def boolean(raw: String): Either[String, Boolean] = raw.toLowerCase(Locale.ROOT) match {
    case "true"  => Right(true)
    case "false" => Right(false)
    case _       => Left("it is not a boolean")
  }

  def long(min: Long, max: Long)(raw: String): Either[String, Long] =
    try {
      val v = raw.toLong
      if (v < min || v > max) Left(s"it is outside $min..$max") else Right(v)
    } catch {
      case _: NumberFormatException => Left("it is not a whole number")
    }

  def int(min: Int, max: Int)(raw: String): Either[String, Int] = long(min.toLong, max.toLong)(raw).map(_.toInt)

  private val DurationPattern = """(\d+)\s*(ms|s|m|min|h)?""".r

  /** A duration such as `500ms`, `1s`, `2m` or `1h`; a bare number is milliseconds. */
  def durationMs(raw: String): Either[String, Long] = raw.toLowerCase(Locale.ROOT) match {
    case DurationPattern(amount, unit) =>
      val factor = Option(unit).getOrElse("ms") match {
        case "ms"        => 1L
        case "s"         => 1000L
        case "m" | "min" => 60000L
        case "h"         => 3600000L
      }
      try Right(Math.multiplyExact(amount.toLong, factor))
      catch { case _: ArithmeticException | _: NumberFormatException => Left("it is too large") }
    case _ => Left("it is not a duration")
  }

  /** A duration of at most an hour. */
  def boundedDuration(raw: String): Either[String, Long] =
    durationMs(raw).flatMap(ms => if (ms > 3600000L) Left("it is longer than 1h") else Right(ms))

  def oneOf(values: Seq[String])(raw: String): Either[String, String] =
    values.find(_.equalsIgnoreCase(raw)).toRight("it is not one of the accepted values")

  def url(raw: String): Either[String, java.net.URI] =
    try {
      val uri = new java.net.URI(raw)
      val scheme = Option(uri.getScheme).map(_.toLowerCase(Locale.ROOT))
      if (!scheme.exists(s => s == "http" || s == "https")) Left("it does not start with http:// or https://")
      else if (uri.getHost == null) Left("it names no host")
      else Right(uri)
    } catch {
      case e: java.net.URISyntaxException => Left(s"it is not a URL (${e.getReason})")
    }

  private val RegionPattern = """[a-z]{2}(-[a-z]+)+-\d+""".r

  def region(raw: String): Either[String, String] = raw match {
    case RegionPattern(_*) => Right(raw)
    case _                 => Left("it is not an AWS region name")
  }
}
