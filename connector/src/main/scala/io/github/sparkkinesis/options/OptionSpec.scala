package io.github.sparkkinesis.options

import java.util.Locale

import com.fasterxml.jackson.databind.JsonNode

import io.github.sparkkinesis.client.ConsumerTags
import io.github.sparkkinesis.offsets.{Json, StartingPosition}

/** Which side of the connector reads an option: the source (reads), the sink (writes) or both. */
sealed abstract class OptionUsage(val name: String)

object OptionUsage {
  case object Source extends OptionUsage("source")
  case object Sink extends OptionUsage("sink")
  case object Both extends OptionUsage("both")
}

/**
 * One option of the connector: its name, typed default, description, parser and whether the source, the sink or both
 * read it, in one place. The type name and the accepted values shown in messages and docs are the parser's.
 */
final case class OptionSpec[T](
    name: String,
    default: Option[T],
    description: String,
    parser: Parser[T],
    secret: Boolean = false,
    usage: OptionUsage = OptionUsage.Both) {

  /** The case-insensitive key Spark hands us options under. */
  def key: String = name.toLowerCase(Locale.ROOT)

  def typeName: String = parser.typeName
  def accepted: String = parser.accepted

  /** The default as a user would write it, such as `1s` or `LATEST`. */
  def defaultText: Option[String] = default.map(parser.show)

  def parse(raw: String): Either[String, T] = parser(raw)

  /** Parses `raw`, failing with a message that names the option, echoes the value and says what is accepted. */
  def parseOrFail(raw: String): T = parser(raw.trim) match {
    case Right(value) => value
    case Left(problem) =>
      val shown = if (secret) "<redacted>" else s"'$raw'"
      throw new IllegalArgumentException(
        s"Invalid value $shown for option $name: $problem. Accepted: $accepted.")
  }
}

/**
 * Turns an option's text (trimmed) into a value, or into why it is refused (a Left). It names its type and what it
 * accepts for messages and docs, shows a value as a user would write it, and describes, as `data`, the part of its
 * check that is pure data (an enum's members, a whole number's range), which other languages may check early.
 */
final class Parser[T](
    val typeName: String,
    val accepted: String,
    run: String => Either[String, T],
    val show: T => String = (value: T) => value.toString,
    val data: Seq[(String, JsonNode)] = Nil) extends (String => Either[String, T]) {
  def apply(raw: String): Either[String, T] = run(raw)
}

/** The registry's parsers; each is the one place that knows its type, its grammar and what it accepts. */
private[options] object Parsers {

  def string(accepted: String): Parser[String] =
    new Parser("string", accepted, raw => if (raw.isEmpty) Left("the value is empty") else Right(raw))

  /** Text that `regex` matches whole, else refused with `problem`. */
  def matches(regex: String, accepted: String, problem: String): Parser[String] =
    new Parser("string", accepted, raw => if (raw.matches(regex)) Right(raw) else Left(problem))

  /** One of `values`, in any case, shown as listed. */
  def oneOf(values: Seq[String]): Parser[String] = {
    val notOne = "it is not one of the accepted values"
    new Parser(
      "enum",
      s"${values.init.mkString(", ")} or ${values.last} (any case)",
      raw => values.find(_.equalsIgnoreCase(raw)).toRight(notOne),
      data = Seq("values" -> Json.array(values), "problem" -> Json.text(notOne)))
  }

  val boolean: Parser[Boolean] = {
    val notOne = "it is not a boolean"
    new Parser(
      "boolean",
      "true or false",
      raw => Seq("true", "false").find(_.equalsIgnoreCase(raw)).map(_.toBoolean).toRight(notOne),
      data = Seq("values" -> Json.array(Seq("true", "false")), "problem" -> Json.text(notOne)))
  }

  /** A whole number of ASCII digits within `min..max`; `unit` (such as "bytes") is named in the accepted text. */
  def long(min: Long, max: Long, unit: String = ""): Parser[Long] = {
    val outside = s"it is outside $min..$max"
    val what = if (unit.isEmpty) "a whole number" else s"a whole number of $unit"
    new Parser(
      "long",
      s"$what from $min to $max",
      raw =>
        if (!raw.matches("[+-]?[0-9]+")) Left("it is not a whole number")
        else Some(BigInt(raw)).filter(v => v >= min && v <= max).map(_.toLong).toRight(outside),
      data = Seq("min" -> Json.number(min), "max" -> Json.number(max), "problem" -> Json.text(outside)))
  }

  def int(min: Int, max: Int): Parser[Int] = {
    val wide = long(min.toLong, max.toLong)
    new Parser("int", wide.accepted, raw => wide(raw).map(_.toInt), data = wide.data)
  }

  private val UnitsMs: Seq[(String, Long)] =
    Seq("ms" -> 1L, "s" -> 1000L, "m" -> 60000L, "min" -> 60000L, "h" -> 3600000L, "d" -> 86400000L)
  private val DurationSyntax = s"([0-9]+) *(${UnitsMs.map(_._1).mkString("|")})?".r

  /** `ms` as a user would write it: in the largest unit that divides it (`90s`, `2m`, `1h`, `250ms`). */
  def showDuration(ms: Long): String =
    Seq("d" -> 86400000L, "h" -> 3600000L, "m" -> 60000L, "s" -> 1000L).collectFirst {
      case (unit, size) if ms != 0 && ms % size == 0 => s"${ms / size}$unit"
    }.getOrElse(s"${ms}ms")

  /**
   * A duration in milliseconds, as Spark writes them (`500ms`, `2s`, `5m`, `1h`, `1d`, any case), from `minMs` to
   * `maxMs`; a bare number counts in `bareUnit` (`ms` or `s`), the unit the option was first given in.
   */
  def duration(minMs: Long, maxMs: Long, bareUnit: String = "ms"): Parser[Long] = {
    val unitMs = UnitsMs.toMap
    val bare = if (bareUnit == "s") "seconds" else "milliseconds"
    val (min, max) = (showDuration(minMs), showDuration(maxMs))
    new Parser(
      "duration",
      s"a duration such as 500ms, 10s or 5m (a bare number is $bare), from $min to $max",
      raw =>
        raw.toLowerCase(Locale.ROOT) match {
          case DurationSyntax(amount, unit) =>
            val ms = BigInt(amount) * unitMs(Option(unit).getOrElse(bareUnit))
            if (ms > maxMs) Left(s"it is longer than $max")
            else if (ms < minMs) Left(s"it is shorter than $min")
            else Right(ms.toLong)
          case _ => Left("it is not a duration")
        },
      show = showDuration)
  }

  /** A duration of at most an hour. */
  val boundedDuration: Parser[Long] = duration(0L, 3600000L)

  def url(example: String): Parser[java.net.URI] = {
    val prefixes = Seq("http://", "https://")
    new Parser(
      "url",
      s"an http:// or https:// URL such as $example",
      raw =>
        if (!prefixes.exists(p => raw.regionMatches(true, 0, p, 0, p.length))) Left(s"it does not start with " +
          prefixes.mkString(" or "))
        else
          try {
            val uri = new java.net.URI(raw)
            if (uri.getHost == null) Left("it names no host") else Right(uri)
          } catch {
            case e: java.net.URISyntaxException => Left(s"it is not a URL (${e.getReason})")
          })
  }

  /**
   * Tags for a stream consumer: a JSON object of string keys to string values, within Kinesis' limits
   * ([[ConsumerTags.problem]]); shown as given, keys sorted.
   */
  val tags: Parser[Map[String, String]] = new Parser(
    "tags",
    "a JSON object of tag keys to values such as {\"team\": \"orders\"}: " +
      s"at most ${ConsumerTags.MaxUserTags} tags, " +
      s"keys of 1 to ${ConsumerTags.MaxKeyLength} and values of up to ${ConsumerTags.MaxValueLength} letters, " +
      "digits, " +
      s"spaces and _ . : / = + - % @, no key starting with aws: or ${ConsumerTags.Prefix}",
    raw =>
      scala.util.Try(Json.read(raw, "the tags")).toOption.filter(_.isObject)
        .toRight("it is not a JSON object")
        .flatMap { node =>
          val fields = Json.fields(node)
          fields.collectFirst { case (k, v) if !v.isTextual => s"the value of tag '$k' is not a JSON string" }
            .orElse(ConsumerTags.problem(fields.map { case (k, v) => k -> v.asText }.toMap))
            .toLeft(scala.collection.immutable.TreeMap(fields.map { case (k, v) => k -> v.asText }: _*))
        },
    show = tags => Json.write(Json.obj(tags.toSeq.map { case (k, v) => k -> Json.text(v) }: _*)))

  val region: Parser[String] =
    matches("[a-z]{2}(-[a-z]+)+-[0-9]+", "an AWS region name such as us-east-1", "it is not an AWS region name")

  /**
   * CloudWatch dimensions as comma-separated `Name=Value` pairs (at most 30, names unique), whose values may hold
   * [[CloudWatchSettings.Placeholders]]; shown as written.
   */
  val dimensions: Parser[Seq[(String, String)]] = {
    import CloudWatchSettings.Placeholders
    new Parser[Seq[(String, String)]](
      "dimensions",
      s"comma-separated Name=Value pairs such as StreamName={stream},Application={app} (at most 30; a value may hold " +
        s"${Placeholders.mkString(", ")})",
      raw => {
        val pairs = raw.split(",", -1).toSeq.map(_.split("=", 2).map(_.trim).toSeq)
        val unknown = pairs.flatMap(_.drop(1)).flatMap("\\{[^}]*\\}".r.findAllIn(_)).filterNot(Placeholders.contains)
        if (pairs.exists(p => p.size != 2 || p.exists(_.isEmpty))) Left("a pair is not Name=Value")
        else if (pairs.size > 30) Left(s"it has ${pairs.size} dimensions, CloudWatch takes at most 30")
        else if (pairs.map(_.head).distinct.size < pairs.size) Left("it names a dimension twice")
        else if (pairs.exists(p => p.head.length > 255 || p.head.startsWith(":") || p(1).length > 1024)) {
          Left("a name is over 255 characters or starts with a colon, or a value is over 1024 characters")
        } else if (unknown.nonEmpty) Left(s"it holds unknown placeholder(s) ${unknown.distinct.mkString(", ")}")
        else Right(pairs.map(p => p.head -> p(1)))
      },
      show = _.map { case (name, value) => s"$name=$value" }.mkString(","))
  }

  def position(accepted: String): Parser[StartingPosition] =
    new Parser(
      "position",
      accepted,
      StartingPosition.parse,
      show = {
        case StartingPosition.Latest => "LATEST"
        case StartingPosition.TrimHorizon => "TRIM_HORIZON"
        case StartingPosition.AtTimestamp(ms) => s"AT_TIMESTAMP ${java.time.Instant.ofEpochMilli(ms)}"
        case StartingPosition.PerShard(shards) => s"a position for each of ${shards.size} shards"
      })
}
