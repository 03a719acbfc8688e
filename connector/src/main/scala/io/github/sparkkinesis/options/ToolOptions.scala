package io.github.sparkkinesis.options

import io.github.sparkkinesis.client.ClientSettings

/** The registry's options as the connector's command-line tools read them: where and as whom to reach Kinesis. */
object ToolOptions {

  /**
   * The client settings of `raw` (`kinesis.*` options as a DataFrame takes them: endpoint, region, credentials, role,
   * retries), checked as a DataFrame's are, with messages that name the option.
   */
  def clientSettings(raw: Map[String, String]): ClientSettings = {
    val values = new OptionValues(raw)
    values.checkAll(OptionUsage.Both)
    values.clientSettings
  }

  /** A duration such as `7d`, `12h` or `30m` (a bare number counts in seconds), read for `what` (a flag's name). */
  def duration(raw: String, what: String): Long =
    Parsers.duration(0L, 3650L * 86400000L, bareUnit = "s")(raw.trim).fold(
      problem =>
        throw new IllegalArgumentException(s"Invalid value '$raw' for $what: $problem. Accepted: a duration " +
          "such as 7d, 12h, 30m or 0s."),
      identity)

  /** `ms` as a user would write it (`7d`, `1h`, `30s`). */
  def showDuration(ms: Long): String = Parsers.showDuration(ms)
}
