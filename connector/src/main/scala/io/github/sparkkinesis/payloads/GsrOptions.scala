package io.github.sparkkinesis.payloads

import java.util.Locale

import io.github.sparkkinesis.options.GlueOptions

/**
 * The options of `from_glue_schema_registry` and `to_glue_schema_registry`: the connector's (`kinesis.region`,
 * credentials, `kinesis.glue.endpointUrl`, ...) and the function's own, whose names are case-insensitive.
 */
private[sparkkinesis] final class GsrOptions(function: String, raw: Map[String, String], own: Seq[String]) {
  private val byName = raw.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }

  raw.keys.filterNot(_.toLowerCase(Locale.ROOT).startsWith("kinesis.")).foreach { key =>
    if (!own.exists(_.equalsIgnoreCase(key)))
      throw new IllegalArgumentException(s"$function has no option '$key'. Its options are " +
        s"${own.mkString(", ")}, and the connector's kinesis.* options that say where the registry is.")
  }

  val target: GlueTarget = {
    val (settings, endpoint) = GlueOptions.parse(raw)
    GlueTarget(settings, endpoint)
  }

  def get(name: String): Option[String] = byName.get(name.toLowerCase(Locale.ROOT)).map(_.trim).filter(_.nonEmpty)

  /** The option's value among `accepted` (case-insensitive), upper-cased, else `default`; fails naming the choices. */
  def choice(name: String, accepted: Seq[String], default: String): String =
    get(name).map(_.toUpperCase(Locale.ROOT)).fold(default) { value =>
      if (accepted.contains(value)) value
      else throw new IllegalArgumentException(s"Option $name of $function is '${get(name).get}'; use one of " +
        s"${accepted.mkString(", ")}.")
    }
}

private[sparkkinesis] object GsrOptions {
  val Mode = "mode"
  val ErrorColumn = "errorColumn"
  val AvroSchema = "avroSchema"
  val JsonSchema = "jsonSchema"
  val ProtobufSchema = "protobufSchema"
  val ProtobufMessage = "protobufMessage"
  val Compression = "compression"
  val AutoRegister = "auto_register"
}
