package io.github.sparkkinesis.options

import java.net.URI

import io.github.sparkkinesis.client.ClientSettings

/** The connector options the Glue Schema Registry payload functions take: where the registry is, and as whom. */
private[sparkkinesis] object GlueOptions {

  /**
   * The Kinesis client settings (region, credentials, retries) of `raw` and `kinesis.glue.endpointUrl`; fails on an
   * unknown or malformed `kinesis.*` option as a DataFrame's options do. Other keys are the function's own.
   */
  def parse(raw: Map[String, String]): (ClientSettings, Option[URI]) = {
    val options =
      new OptionValues(raw.filter { case (k, _) => k.toLowerCase(java.util.Locale.ROOT).startsWith("kinesis.") })
    options.checkAll(OptionUsage.Both)
    (options.clientSettings, options.get(KinesisOptionsRegistry.GlueEndpointUrl))
  }
}
