package io.github.sparkkinesis.options

import java.net.URI
import java.util.Locale
import java.util.concurrent.atomic.AtomicBoolean
import java.util.regex.Pattern

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf
import org.slf4j.LoggerFactory

/**
 * Keeps the values of secret options out of Spark's plans. Spark keeps a query's options in its plan nodes and shows
 * them in `explain()`, the SQL tab and event logs, hiding only values whose key matches its redaction patterns
 * (`spark.sql.redaction.options.regex`, `spark.redaction.regex`); their defaults miss some of the connector's secret
 * options (`kinesis.credentialProviderParam`, `kinesis.stsExternalId`, alias spellings). When a query gives such an
 * option, the session's `spark.sql.redaction.options.regex` is extended to match it (the user's pattern kept as an
 * alternative), with a warning that says so; a session whose patterns already hide it is left alone. The connector's
 * own plan descriptions ([[describeEndpoint]]) hide what they show of such values whatever the session's patterns.
 */
object PlanRedaction {
  val RegexKey = "spark.sql.redaction.options.regex"

  /** What stands for a hidden value: Spark's own marker, so a hidden endpoint reads as Spark's hidden options do. */
  val Hidden = "*********(redacted)"

  /** The lower-case keys of every secret option and of every alias that sets one: the registry says which. */
  val secretKeys: Seq[String] = {
    val secret = KinesisOptionsRegistry.all.filter(_.secret)
    val aliases = KinesisOptionsRegistry.aliases.collect {
      case OptionAlias(name, _, AliasEffect.Sets(target, _, _)) if secret.exists(_.name.equalsIgnoreCase(target)) =>
        name.toLowerCase(Locale.ROOT)
    }
    (secret.map(_.key) ++ aliases).distinct.sorted
  }

  /** The pattern that matches exactly the secret options' keys, in any case, wherever a key holds them. */
  val secretKeysPattern: String = secretKeys.map(Pattern.quote).mkString("(?i)(?:^|\\.)(?:", "|", ")$")

  /**
   * An endpoint as a plan's description shows it: hidden when set, as Spark hides options named `*url*` by default,
   * since a URL can carry credentials (user info, a signed query string); `<AWS>` when unset.
   */
  def describeEndpoint(endpoint: Option[URI]): String = endpoint.fold("<AWS>")(_ => Hidden)

  private val extender = new RedactionExtender((session, pattern) => session.conf.set(RegexKey, pattern))

  /**
   * Makes the active session's redaction patterns hide every secret option among `given` (keys in any case), before
   * Spark puts them in a plan; does nothing when they already do or none is given. Never fails: without an active
   * session, or when the session refuses the setting, it warns (the former once) and leaves the patterns as they are.
   */
  def ensureHidden(given: Iterable[String]): Unit = extender.ensureHidden(given, SparkSession.getActiveSession)
}

/**
 * Extends a session's `spark.sql.redaction.options.regex` through `setPattern` (Spark's conf, or a test's); returns the
 * warning it logged, if any. Warns only once about secret options given with no session to extend.
 */
private[options] final class RedactionExtender(setPattern: (SparkSession, String) => Unit) {
  import PlanRedaction.{secretKeys, secretKeysPattern, RegexKey}

  private val log = LoggerFactory.getLogger(PlanRedaction.getClass)
  private val warnedWithoutSession = new AtomicBoolean(false)

  def ensureHidden(given: Iterable[String], active: Option[SparkSession]): Option[String] = {
    val exposed = given.map(_.toLowerCase(Locale.ROOT)).filter(secretKeys.contains).filterNot(hidden).toSeq.sorted
    val warning =
      if (exposed.isEmpty) None
      else active match {
        case Some(session) =>
          session.synchronized(if (exposed.exists(k => !hidden(k))) extend(session, exposed) else None)
        case None if warnedWithoutSession.compareAndSet(false, true) =>
          val before = SQLConf.get.getConfString(RegexKey)
          Some(s"${unhidden(exposed, before)}, and no Spark session is active on this thread for spark-kinesis to " +
            s"extend it: ${setWhereBuilt(before)}")
        case None => None
      }
    warning.foreach(log.warn)
    warning
  }

  private def extend(session: SparkSession, exposed: Seq[String]): Option[String] = {
    val before = session.conf.get(RegexKey)
    val after = extended(before)
    try {
      setPattern(session, after)
      Some(s"${unhidden(exposed, before)}: spark-kinesis extended it to '$after' for this session. Set $RegexKey " +
        "to a pattern that matches them to keep this from changing.")
    } catch {
      // A session may refuse to change its settings (a managed platform's); the query goes on, warned.
      case NonFatal(e) =>
        Some(s"${unhidden(exposed, before)}, and the session refused to extend it (${e.getMessage}): " +
          setWhereBuilt(before))
    }
  }

  private def extended(before: String): String = s"(?:$before)|$secretKeysPattern"

  private def unhidden(exposed: Seq[String], before: String): String =
    s"Options ${exposed.mkString(", ")} hold secrets that $RegexKey ('$before') does not hide from query plans " +
      "(explain(), the SQL tab, event logs)"

  private def setWhereBuilt(before: String): String =
    s"set $RegexKey to '${extended(before)}' where the session is built, so that plans hide them."

  /** Whether the active session's patterns hide the value of option `key`. */
  private def hidden(key: String): Boolean = {
    val probe = "spark-kinesis-probe"
    SQLConf.get.redactOptions(Map(key -> probe)).get(key).exists(_ != probe)
  }
}
