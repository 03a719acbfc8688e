package io.github.sparkkinesis.options

import java.util.Locale
import java.util.regex.Pattern

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf
import org.slf4j.LoggerFactory

/**
 * Keeps the values of secret options out of Spark's plans. Spark keeps a query's options in its plan nodes and shows
 * them in `explain()`, the SQL tab and event logs, hiding only values whose key matches its redaction patterns
 * (`spark.sql.redaction.options.regex`, `spark.redaction.regex`); their defaults miss some of the connector's secret
 * options (`kinesis.credentialProviderParam`, `kinesis.stsExternalId`, alias spellings). When a query gives such an
 * option, the session's `spark.sql.redaction.options.regex` is extended to match it (the user's pattern kept as an
 * alternative), with a warning that says so; a session whose patterns already hide it is left alone.
 */
object PlanRedaction {
  private val log = LoggerFactory.getLogger(getClass)

  val RegexKey = "spark.sql.redaction.options.regex"

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
   * Makes the active session's redaction patterns hide every secret option among `given` (keys in any case), before
   * Spark puts them in a plan; does nothing when they already do or none is given.
   */
  def ensureHidden(given: Iterable[String]): Unit = {
    val exposed = given.map(_.toLowerCase(Locale.ROOT)).filter(secretKeys.contains).filterNot(hidden).toSeq.sorted
    if (exposed.nonEmpty) SparkSession.getActiveSession.foreach(session =>
      session.synchronized {
        if (exposed.exists(k => !hidden(k))) {
          val before = session.conf.get(RegexKey)
          val after = s"(?:$before)|$secretKeysPattern"
          session.conf.set(RegexKey, after)
          log.warn(s"Options ${exposed.mkString(", ")} hold secrets that $RegexKey ('$before') did not hide from " +
            s"query plans (explain(), the SQL tab, event logs): spark-kinesis extended it to '$after' for this " +
            s"session. Set $RegexKey to a pattern that matches them to keep this from changing.")
        }
      })
  }

  /** Whether the active session's patterns hide the value of option `key`. */
  private def hidden(key: String): Boolean = {
    val probe = "spark-kinesis-probe"
    SQLConf.get.redactOptions(Map(key -> probe)).get(key).exists(_ != probe)
  }
}
