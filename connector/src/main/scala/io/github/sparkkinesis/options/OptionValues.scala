package io.github.sparkkinesis.options

import java.util.Locale

import io.github.sparkkinesis.client.{
  AssumeRoleSettings,
  AwsCredentials,
  ClientSettings,
  ProviderClassSettings,
  RetrySettings,
  UserCredentialsProvider
}

/**
 * The options of one DataFrame (source or sink), read through the registry's [[OptionSpec]]s. Keys are
 * case-insensitive, as in Spark; other connectors' spellings are read as the options they stand for, with their
 * warnings logged ([[AliasResolution]]); a `kinesis.*` key the registry does not know fails at construction, naming the
 * closest known option.
 */
private[options] final class OptionValues(raw: Map[String, String]) {
  import KinesisOptionsRegistry._

  private val options = {
    val resolution = AliasResolution.resolve(raw)
    OptionValues.rejectUnknown(resolution.options.keys)
    resolution.warnings.foreach(OptionValues.warnOnce)
    resolution.options
  }

  def get[T](spec: OptionSpec[T]): Option[T] = options.get(spec.key).map(spec.parseOrFail)

  def getOrDefault[T](spec: OptionSpec[T]): T =
    get(spec).orElse(spec.default).getOrElse(throw new IllegalStateException(s"option ${spec.name} has no default"))

  /**
   * Checks every option present, so a bad value fails now even if this DataFrame does not use it, then the registry's
   * rules across options that apply to `side`, in order.
   */
  def checkAll(side: OptionUsage): Unit = {
    all.foreach(spec => get(spec))
    val number: OptionSpec[Long] => Long = getOrDefault(_)
    val text: OptionSpec[_] => Option[String] = spec => options.get(spec.key).map(_.trim).orElse(spec.defaultText)
    rules.filter(r => r.usage == side || r.usage == OptionUsage.Both)
      .flatMap(_.violation(spec => options.contains(spec.key), number, text))
      .foreach(message => throw new IllegalArgumentException(message))
  }

  /** Where and as whom to reach Kinesis: the options the source and the sink share; call after [[checkAll]]. */
  def clientSettings: ClientSettings = {
    val endpoint = get(EndpointUrl)
    val region = get(Region).orElse(endpoint.flatMap(OptionValues.regionOfAwsEndpoint))
    // The retry rule (maximum not below the base) was checked by checkAll, in words that name the options.
    val retry = RetrySettings(
      getOrDefault(ClientNumRetries),
      getOrDefault(ClientRetryInterval),
      getOrDefault(ClientMaxRetryInterval))
    // The credential rules (a pair, a token only with them) were checked by checkAll too.
    val credentials = for (id <- get(AwsAccessKeyId); secret <- get(AwsSecretKey))
      yield AwsCredentials(id, secret, get(SessionToken))
    val providerClass = get(CredentialProviderClass).map(ProviderClassSettings(_, get(CredentialProviderParam)))
    // Loaded now, on the driver, so a missing class or one of the wrong type fails when the DataFrame is created.
    providerClass.foreach(UserCredentialsProvider.check)
    val assumeRole = get(StsRoleArn).map(arn =>
      AssumeRoleSettings(arn, getOrDefault(StsSessionName), get(StsExternalId), get(StsEndpointUrl)))
    ClientSettings(
      region,
      endpoint,
      credentials,
      retry,
      verifyCertificate = getOrDefault(VerifyCertificate),
      providerClass = providerClass,
      assumeRole = assumeRole)
  }
}

private[options] object OptionValues {
  import KinesisOptionsRegistry.{aliases, all, find}

  private val log = org.slf4j.LoggerFactory.getLogger(classOf[OptionValues])
  private val warned = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /** Spark parses a DataFrame's options several times (schema, table, scan): each warning is logged once a JVM. */
  private def warnOnce(warning: String): Unit = if (warned.add(warning)) log.warn(warning) else log.debug(warning)

  /** The names an unknown `kinesis.*` option is compared with: the registry's, and the aliases of that form. */
  private val knownNames: Seq[String] =
    all.map(_.name) ++ aliases.map(_.name).filter(_.startsWith("kinesis."))

  private val AwsEndpointHost =
    """(?:^|.*\.)kinesis(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?""".r

  /** The region named by an AWS endpoint's host, such as us-west-2 for https://kinesis.us-west-2.amazonaws.com. */
  def regionOfAwsEndpoint(endpoint: java.net.URI): Option[String] =
    Option(endpoint.getHost).map(_.toLowerCase(Locale.ROOT)).collect { case AwsEndpointHost(region) => region }

  /** Fails on a `kinesis.*` option the registry does not know, naming the closest known one. */
  private def rejectUnknown(keys: Iterable[String]): Unit =
    keys.filter(_.startsWith("kinesis.")).find(k => find(k).isEmpty).foreach { unknown =>
      val closest = knownNames.minBy(name => editDistance(name.toLowerCase(Locale.ROOT), unknown))
      throw new IllegalArgumentException(
        s"Unknown option '$unknown'. Did you mean $closest? The accepted options are listed at " +
          "https://github.com/spark-kinesis/spark-kinesis/blob/main/docs/options.md.")
    }

  private def editDistance(a: String, b: String): Int = {
    val row = Array.tabulate(b.length + 1)(identity)
    for (i <- 1 to a.length) {
      var diagonal = row(0)
      row(0) = i
      for (j <- 1 to b.length) {
        val above = row(j)
        row(j) = math.min(math.min(row(j) + 1, row(j - 1) + 1), diagonal + (if (a(i - 1) == b(j - 1)) 0 else 1))
        diagonal = above
      }
    }
    row(b.length)
  }
}
