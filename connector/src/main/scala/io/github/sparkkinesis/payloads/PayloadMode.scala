package io.github.sparkkinesis.payloads

import java.util.Locale

/**
 * What a payload function does with a record it cannot decode: PERMISSIVE gives null (and the reason where the result
 * has an `error` field), FAILFAST fails the task with the reason.
 */
sealed abstract class PayloadMode(val name: String) extends Serializable

object PayloadMode {
  case object Permissive extends PayloadMode("PERMISSIVE")
  case object FailFast extends PayloadMode("FAILFAST")

  /** The mode `name` names, in any case; `function` names the caller in the message for a name that is neither. */
  def parse(name: String, function: String): PayloadMode =
    Option(name).map(_.trim.toUpperCase(Locale.ROOT)) match {
      case Some(Permissive.name) => Permissive
      case Some(FailFast.name) => FailFast
      case _ =>
        throw new IllegalArgumentException(
          s"$function: mode '$name' is not one of PERMISSIVE (null, and the reason where the result has an error " +
            "field) or FAILFAST (fail the task); pass one of them")
    }
}

/** Why a record could not be decoded; cheap to throw (no stack trace), caught by the expression that decodes. */
private[payloads] final class PayloadError(reason: String) extends RuntimeException(reason, null, false, false)

private[payloads] object PayloadError {
  def apply(reason: String): Nothing = throw new PayloadError(reason)
}

/** A record a payload function could not decode in FAILFAST mode. */
final class MalformedPayloadException(function: String, reason: String)
    extends RuntimeException(
      s"$function: $reason. The record was not decoded (mode FAILFAST); mode PERMISSIVE gives null instead" +
        " (and the reason in the result's error field, where it has one)")
