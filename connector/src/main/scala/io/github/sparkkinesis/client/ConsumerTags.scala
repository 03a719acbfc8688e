package io.github.sparkkinesis.client

import java.nio.charset.StandardCharsets.UTF_8

/**
 * The tags on stream consumers: the user's (option kinesis.consumerTags), checked against Kinesis' limits, and the
 * connector's own, under [[Prefix]], which name the checkpoint whose query registered the consumer, so that `python -m
 * pyspark_kinesis consumers` can tell which query holds it.
 *
 * Kinesis allows 50 tags per consumer, keys of 1 to 128 and values of up to 256 characters, and reserves the prefix
 * `aws:`. Which characters it takes is documented two ways: Kinesis' API reference names letters, digits, white space
 * and `_ . / = + - % @`, AWS' general tagging rules (and kinesis-mock) `_ . : / = + - @`. User tags may use either set;
 * the connector's own tags keep to what both allow, so a checkpoint location is escaped as URLs are, with `+` instead
 * of `%` (`s3a://b` is `s3a+3A//b`), and split over up to [[MaxLocationParts]] tags of 256 characters.
 */
object ConsumerTags {

  /** The connector's own tag keys start with this; a user tag may not. */
  val Prefix = "spark-kinesis/"

  /** The key of the checkpoint location's first part; further parts are `<key>/2`, `<key>/3`, ... */
  val CheckpointKey: String = Prefix + "checkpoint"

  val MaxTags = 50
  val MaxKeyLength = 128
  val MaxValueLength = 256

  /** How many tags a checkpoint location may take: a location longer than that (escaped) is not recorded. */
  val MaxLocationParts = 4

  /** How many tags a user may give: the rest is kept for the connector's own. */
  val MaxUserTags: Int = MaxTags - MaxLocationParts

  /** What either documentation allows in a tag. */
  private val Allowed = "[\\p{L}\\p{N}\\p{Z}\\s_.:/=+\\-%@]*"

  /** What both allow, less `+`, the escape character of the connector's own tags. */
  private val Plain = "[\\p{L}\\p{N}\\p{Z}_./=\\-@]"

  /** Why `tags` cannot go on a consumer, or None; the text names the offending tag. */
  def problem(tags: Map[String, String]): Option[String] = {
    def bad(key: String, value: String): Option[String] =
      if (key.isEmpty) Some("a tag key is empty")
      else if (key.length > MaxKeyLength) Some(s"tag key '$key' is longer than $MaxKeyLength characters")
      else if (value.length > MaxValueLength)
        Some(s"the value of tag '$key' is longer than $MaxValueLength characters")
      else if (key.regionMatches(true, 0, "aws:", 0, 4)) Some(s"tag key '$key' starts with aws:, which AWS reserves")
      else if (!key.matches(Allowed) || !value.matches(Allowed))
        Some(s"tag '$key' has a character other than letters, digits, white space and _ . : / = + - % @")
      else if (key.startsWith(Prefix)) Some(s"tag key '$key' starts with $Prefix, which the connector reserves")
      else None
    if (tags.size > MaxUserTags)
      Some(s"it has ${tags.size} tags, more than $MaxUserTags (Kinesis allows $MaxTags per consumer and the " +
        s"connector keeps $MaxLocationParts for its own)")
    else tags.iterator.map { case (k, v) => bad(k, v) }.collectFirst { case Some(p) => p }
  }

  /**
   * The connector's tags naming `checkpoint` (a qualified location); one with an empty value when the location is too
   * long to fit, which marks the consumer as the connector's without saying which query holds it.
   */
  def ofCheckpoint(checkpoint: String): Map[String, String] = {
    val parts = escape(checkpoint).grouped(MaxValueLength).toVector
    if (parts.size > MaxLocationParts) Map(CheckpointKey -> "")
    else parts.zipWithIndex.map { case (part, i) => partKey(i) -> part }.toMap
  }

  /**
   * The tags that make a consumer's connector tags name `checkpoint` whatever they named before: [[ofCheckpoint]]'s,
   * and an empty value for each further part a longer location may have left.
   */
  def replacingCheckpoint(checkpoint: String): Map[String, String] =
    (0 until MaxLocationParts).map(i => partKey(i) -> "").toMap ++ ofCheckpoint(checkpoint)

  /** The checkpoint location the connector's tags name, if they name one. */
  def checkpointOf(tags: Map[String, String]): Option[String] = {
    val parts = Iterator.from(0).map(i => tags.get(partKey(i))).takeWhile(_.isDefined).flatten.toVector
    Some(unescape(parts.mkString)).filter(_.nonEmpty)
  }

  /** Whether the connector registered the consumer with these tags. */
  def registeredByConnector(tags: Map[String, String]): Boolean = tags.keys.exists(_.startsWith(Prefix))

  private def partKey(i: Int): String = if (i == 0) CheckpointKey else s"$CheckpointKey/${i + 1}"

  /** `text` with every character but [[Plain]] ones written as `+` and two hex digits per UTF-8 byte. */
  private def escape(text: String): String = {
    val out = new StringBuilder
    var i = 0
    while (i < text.length) {
      val char = new String(Character.toChars(text.codePointAt(i)))
      if (char.matches(Plain)) out ++= char else char.getBytes(UTF_8).foreach(b => out ++= f"+${b & 0xff}%02X")
      i += char.length
    }
    out.toString
  }

  private def unescape(text: String): String = {
    val bytes = new java.io.ByteArrayOutputStream()
    var i = 0
    while (i < text.length) {
      if (text.charAt(i) == '+' && i + 2 < text.length) {
        bytes.write(Integer.parseInt(text.substring(i + 1, i + 3), 16))
        i += 3
      } else {
        val char = new String(Character.toChars(text.codePointAt(i)))
        bytes.write(char.getBytes(UTF_8))
        i += char.length
      }
    }
    new String(bytes.toByteArray, UTF_8)
  }
}
