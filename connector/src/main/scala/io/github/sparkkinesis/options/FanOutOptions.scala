package io.github.sparkkinesis.options

/**
 * How a query reads through enhanced fan-out: through a consumer it manages (`consumerName`: registered if absent,
 * deregistered on stop if it registered it and `deregisterOnStop`) or through an existing one (`consumerArn`).
 */
final case class FanOutOptions(
    consumerName: Option[String],
    consumerArn: Option[String],
    deregisterOnStop: Boolean,
    subscribeTimeoutMs: Long,
    maxRetries: Int) {
  import KinesisOptionsRegistry._

  /**
   * Checks that exactly one consumer is named, when the query starts. Not at load(): the registry's rules, which
   * other languages' builders mirror, have no "required when another option has this value".
   */
  def checkConsumer(): Unit = {
    if (consumerName.isEmpty && consumerArn.isEmpty) {
      throw new IllegalArgumentException(s"Option ${ConsumerType.name} asks for enhanced fan-out (SubscribeToShard), " +
        s"which reads through a stream consumer: set option ${ConsumerName.name} to a name for the consumer this query " +
        "registers and manages, for example .option(\"" + ConsumerName.name + "\", \"my-query\"), or option " +
        s"${ConsumerArn.name} to the ARN of an existing consumer.")
    }
    if (consumerName.isDefined && consumerArn.isDefined) {
      throw new IllegalArgumentException(s"Options ${ConsumerName.name} ('${consumerName.get}') and ${ConsumerArn.name} " +
        s"('${consumerArn.get}') are both set: set ${ConsumerName.name} for a consumer the query manages, or " +
        s"${ConsumerArn.name} for an existing consumer it only reads through, not both.")
    }
  }
}

object FanOutOptions {
  import KinesisOptionsRegistry._

  /** The fan-out options when `kinesis.consumerType` asks for SubscribeToShard (or EFO). */
  private[options] def parse(options: OptionValues): Option[FanOutOptions] = {
    import options.{get, getOrDefault}
    if (getOrDefault(ConsumerType).equalsIgnoreCase("GetRecords")) None
    else {
      val (name, arn) = (get(ConsumerName), get(ConsumerArn))
      Some(FanOutOptions(name, arn, getOrDefault(DeregisterConsumerOnStop),
        getOrDefault(SubscribeToShardTimeoutSec) * 1000L, getOrDefault(SubscribeToShardMaxRetries)))
    }
  }
}
