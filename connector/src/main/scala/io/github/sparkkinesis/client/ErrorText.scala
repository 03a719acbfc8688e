package io.github.sparkkinesis.client

import scala.util.matching.Regex

/**
 * Takes secrets out of text copied from the AWS SDK's and the KPL's errors, for Kinesis, DynamoDB and the sink alike:
 * the values the options gave (secret key, session token, provider parameter, external id), and whatever of a signed
 * request such text can quote. AWS's signature errors quote the canonical request with its session token header, and a
 * role's or the default chain's token is no option value that could be replaced by name.
 */
private[sparkkinesis] object ErrorText {
  val Redacted = "<redacted>"

  private val rules: Seq[(Regex, String)] = Seq(
    // What follows these sentences of a signature error is the canonical request and the string to sign.
    "(?is)(the canonical string for this request should have been).*".r -> s"$$1 $Redacted",
    "(?is)(the string-to-sign should have been).*".r -> s"$$1 $Redacted",
    "(?i)(x-amz-security-token\\s*[:=]\\s*)[^\\s&,;\"']+".r -> s"$$1$Redacted",
    "(?i)(signature\\s*=\\s*)[0-9a-f]{16,}".r -> s"$$1$Redacted",
    "(?i)(credential\\s*=\\s*)[^\\s,&\"']+".r -> s"$$1$Redacted",
    "(?i)(authorization\\s*:\\s*)[^\\r\\n]+".r -> s"$$1$Redacted",
    // Session tokens are hundreds of base64 characters; no message needs such a run.
    "[A-Za-z0-9+/=]{100,}".r -> Redacted)

  /**
   * An endpoint as messages echo it: scheme, host, port and path, with the parts of a URL that can carry credentials
   * (user info, a query string such as a presigned one's, a fragment) replaced by [[Redacted]].
   */
  def endpoint(url: java.net.URI): String = {
    def part(present: String, before: String, after: String) = Option(present).fold("")(_ => before + Redacted + after)
    s"${url.getScheme}://${part(url.getRawUserInfo, "", "@")}${url.getHost}" +
      (if (url.getPort >= 0) s":${url.getPort}" else "") + Option(url.getRawPath).getOrElse("") +
      part(url.getRawQuery, "?", "") + part(url.getRawFragment, "#", "")
  }

  /** `text` without `secrets` and without the parts of a signed request. */
  def scrub(text: String, secrets: Seq[String]): String = {
    val known = secrets.filter(_.nonEmpty).sortBy(-_.length)
      .foldLeft(String.valueOf(text))((t, secret) => t.replace(secret, Redacted))
    rules.foldLeft(known) { case (t, (regex, replacement)) => regex.replaceAllIn(t, replacement) }
  }

  /**
   * `e` itself when no message along its causes holds anything [[scrub]] removes, so callers keep its type; else a
   * [[ScrubbedException]] copy of the chain with every message scrubbed and the stack traces kept.
   */
  def safeCause(e: Throwable, secrets: Seq[String]): Throwable =
    if (chain(e).forall(t => Option(t.getMessage).forall(m => scrub(m, secrets) == m))) e else copy(e, secrets, 10)

  private def chain(e: Throwable): Iterator[Throwable] = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10)

  private def copy(e: Throwable, secrets: Seq[String], depth: Int): Throwable = {
    val cause = Option(e.getCause).filter(_ => depth > 1).map(copy(_, secrets, depth - 1)).orNull
    val scrubbed = new ScrubbedException(e.getClass.getName, Option(e.getMessage).map(scrub(_, secrets)).orNull, cause)
    scrubbed.setStackTrace(e.getStackTrace)
    scrubbed
  }
}

/** An exception of class `originalClass` whose message had secrets removed; its stack trace is the original's. */
final class ScrubbedException(val originalClass: String, message: String, cause: Throwable)
    extends RuntimeException(message, cause) {
  override def toString: String = s"$originalClass (secrets removed)" + Option(message).fold("")(m => s": $m")
}
