package io.github.sparkkinesis.options

import io.github.sparkkinesis.options.KinesisOptionsRegistry._
import io.github.sparkkinesis.options.OptionUsage.Source

/** The registry's rules across options, each with the message that names the options and says what to do. */
object OptionRules {

  /**
   * The rules across options, checked in this order after every value: the source needs a stream, credentials come as a
   * pair (a session token with them), the retry maximum is not below the base interval, the STS options need a role, a
   * provider parameter its class, keys and a provider class exclude each other, consumer tags need a consumer name,
   * enhanced fan-out names exactly one consumer, and the CloudWatch options need kinesis.emitConsumerLagMetrics.
   */
  val all: Seq[OptionRule] = Seq(
    OptionRule.Required(
      Seq(StreamName, StreamARN),
      Source,
      s"Option ${StreamName.name} is required: set it to the name of the Kinesis stream to read, for example " +
        ".option(\"" + StreamName.name + "\", \"my-stream\") (or give the stream's ARN in " + StreamARN.name + ")."),
    OptionRule.Together(
      Seq(AwsAccessKeyId, AwsSecretKey),
      s"Options ${AwsAccessKeyId.name} and ${AwsSecretKey.name} go together: set both, or neither to use the " +
        "default credentials chain (environment, profile, instance or container role)."),
    OptionRule.Needs(
      Seq(SessionToken, AwsAccessKeyId, AwsSecretKey),
      s"Option ${SessionToken.name} is set without ${AwsAccessKeyId.name} and ${AwsSecretKey.name}: give all " +
        "three for temporary credentials, or none to use the default credentials chain."),
    OptionRule.NotBelow(
      ClientMaxRetryInterval,
      ClientRetryInterval,
      s"Option ${ClientMaxRetryInterval.name} ({value}) is smaller than ${ClientRetryInterval.name} " +
        "({floor}): make the maximum at least the base interval."),
    OptionRule.Needs(
      Seq(StsExternalId, StsRoleArn),
      s"Option ${StsExternalId.name} is set without ${StsRoleArn.name}: an external id is only used when " +
        "assuming a role; set the role's ARN too, or remove the external id."),
    OptionRule.Needs(
      Seq(StsSessionName, StsRoleArn),
      s"Option ${StsSessionName.name} is set without ${StsRoleArn.name}: set the ARN of the role to assume, or " +
        "remove the session name."),
    OptionRule.Needs(
      Seq(StsEndpointUrl, StsRoleArn),
      s"Option ${StsEndpointUrl.name} is set without ${StsRoleArn.name}: it is only used to assume a role; " +
        "set the role's ARN too, or remove it."),
    OptionRule.Needs(
      Seq(CredentialProviderParam, CredentialProviderClass),
      s"Option ${CredentialProviderParam.name} is set without ${CredentialProviderClass.name}: set the class " +
        "it is handed to, or remove it."),
    OptionRule.Excludes(
      Seq(AwsAccessKeyId, CredentialProviderClass),
      s"Options ${AwsAccessKeyId.name} and ${CredentialProviderClass.name} both name base credentials: keep " +
        "one (the keys, or the provider class)."),
    OptionRule.Needs(
      Seq(ConsumerTagsOption, ConsumerName),
      s"Option ${ConsumerTagsOption.name} is set without ${ConsumerName.name}: tags go on a consumer the query " +
        s"registers itself; set ${ConsumerName.name}, or tag the consumer of ${ConsumerArn.name} yourself " +
        "(aws kinesis tag-resource)."),
    OptionRule.OneWhen(
      ConsumerType,
      FanOutConsumerTypes,
      Seq(ConsumerName, ConsumerArn),
      Source,
      s"Option ${ConsumerType.name} is '{${ConsumerType.name}}', enhanced fan-out, which reads through a stream " +
        s"consumer, but none is named: set option ${ConsumerName.name} to a name for the consumer this query " +
        "registers and manages, for example .option(\"" + ConsumerName.name + "\", \"my-query\"), or option " +
        s"${ConsumerArn.name} to the ARN of an existing consumer (or set ${ConsumerType.name} to GetRecords to poll).",
      s"Options ${ConsumerName.name} ('{${ConsumerName.name}}') and ${ConsumerArn.name} ('{${ConsumerArn.name}}') " +
        s"are both set, but ${ConsumerType.name} '{${ConsumerType.name}}' reads through one consumer: set " +
        s"${ConsumerName.name} for a consumer the query manages, or ${ConsumerArn.name} for an existing consumer " +
        "it only reads through, not both.")) ++
    Seq(CloudWatchNamespace, CloudWatchDimensions, CloudWatchEndpointUrl, CloudWatchRegion).map(option =>
      OptionRule.Needs(
        Seq(option, EmitConsumerLagMetrics),
        s"Option ${option.name} is set without ${EmitConsumerLagMetrics.name}: it only shapes what that option " +
          s"publishes to CloudWatch; set ${EmitConsumerLagMetrics.name} to true, or remove it."))
}
