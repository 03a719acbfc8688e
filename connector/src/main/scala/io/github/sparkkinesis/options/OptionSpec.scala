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
 * is accepted; built from [[Parsers]], it also describes its check as data ([[check]]) for other languages.
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

  /** What `parse` accepts, as data; a parser not built from [[Parsers]] is the connector's alone to check. */
  def check: OptionCheck = parse match {
    case described: Parser[_] => described.check
    case _                    => OptionCheck.ConnectorOnly
  }

  /** Parses `raw`, failing with a message that names the option, echoes the value and says what is accepted. */
  def parseOrFail(raw: String): T = parse(raw.trim) match {
    case Right(value) => value
    case Left(problem) =>
      val shown = if (secret) "<redacted>" else s"'$raw'"
      throw new IllegalArgumentException(
        s"Invalid value $shown for option $name: $problem. Accepted: $accepted.")
  }
}

/** A parser that carries the description of its check, so that what it accepts can be told to other languages. */
final class Parser[T](val check: OptionCheck, run: String => Either[String, T]) extends (String => Either[String, T]) {
  def apply(raw: String): Either[String, T] = run(raw)

  def map[U](f: T => U): Parser[U] = new Parser(check, raw => run(raw).map(f))
}

/** Parsers shared by the options registry, each following its [[OptionCheck]]; a Left is why a value is refused. */
private[options] object Parsers {
  import OptionCheck._

  val string: Parser[String] = new Parser(NonEmpty, raw => if (raw.isEmpty) Left(NonEmpty.empty) else Right(raw))

  def oneOf(values: Seq[String], refused: Seq[(String, String)] = Nil): Parser[String] = {
    val check = OneOf(values, refused)
    new Parser(check, raw => refused.find(_._1.equalsIgnoreCase(raw)) match {
      case Some((_, why)) => Left(why)
      case None           => values.find(_.equalsIgnoreCase(raw)).toRight(check.notOne)
    })
  }

  val boolean: Parser[Boolean] =
    new Parser(Bool, raw => Bool.values.find(_.equalsIgnoreCase(raw)).map(_.toBoolean).toRight(Bool.notOne))

  def long(min: Long, max: Long): Parser[Long] = {
    val check = Whole(min, max)
    new Parser(check, raw =>
      if (!raw.matches(check.syntax)) Left(check.notWhole)
      else Some(BigInt(raw)).filter(v => v >= min && v <= max).map(_.toLong).toRight(check.outside))
  }

  def int(min: Int, max: Int): Parser[Int] = long(min.toLong, max.toLong).map(_.toInt)

  /** A duration in milliseconds, such as `500ms`, `1s`, `2m` or `1h` (a bare number is milliseconds), up to `max`. */
  def durationMs(max: String): Parser[Long] = {
    val maxMs = durationOf(max).getOrElse(throw new IllegalArgumentException(s"$max is not a duration"))
    val check = Duration(maxMs.toLong, max)
    new Parser(check, raw => durationOf(raw).toRight(check.notDuration).flatMap(ms =>
      if (ms > maxMs) Left(check.longer) else Right(ms.toLong)))
  }

  private val DurationSyntax = Duration.Syntax.r
  private val unitMs = Duration.UnitsMs.toMap

  private def durationOf(raw: String): Option[BigInt] = raw.toLowerCase(Locale.ROOT) match {
    case DurationSyntax(amount, unit) => Some(BigInt(amount) * unitMs(Option(unit).getOrElse("ms")))
    case _                            => None
  }

  /** A duration of at most an hour (after durationOf's regex, which it needs initialised). */
  val boundedDuration: Parser[Long] = durationMs(max = "1h")

  def matches(regex: String, problem: String): Parser[String] =
    new Parser(Matches(regex, problem), raw => if (raw.matches(regex)) Right(raw) else Left(problem))

  val url: Parser[java.net.URI] = {
    val check = Url(Seq("http://", "https://"))
    new Parser(check, raw =>
      if (!check.prefixes.exists(p => raw.regionMatches(true, 0, p, 0, p.length))) Left(check.noPrefix)
      else
        try {
          val uri = new java.net.URI(raw)
          if (uri.getHost == null) Left("it names no host") else Right(uri)
        } catch {
          case e: java.net.URISyntaxException => Left(s"it is not a URL (${e.getReason})")
        })
  }

  val region: Parser[String] = matches("[a-z]{2}(-[a-z]+)+-[0-9]+", "it is not an AWS region name")
}
