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
    maxRetries: Int)

object FanOutOptions {
  import KinesisOptionsRegistry._

  /** The fan-out options when `kinesis.consumerType` asks for SubscribeToShard (or EFO); fails naming what is missing. */
  private[options] def parse(options: OptionValues): Option[FanOutOptions] = {
    import options.{get, getOrDefault}
    val consumerType = getOrDefault(ConsumerType)
    if (consumerType.equalsIgnoreCase("GetRecords")) None
    else {
      val (name, arn) = (get(ConsumerName), get(ConsumerArn))
      if (name.isEmpty && arn.isEmpty) {
        throw new IllegalArgumentException(s"Option ${ConsumerType.name} is '$consumerType' (enhanced fan-out), which " +
          s"reads through a stream consumer: set option ${ConsumerName.name} to a name for the consumer this query " +
          "registers and manages, for example .option(\"" + ConsumerName.name + "\", \"my-query\"), or option " +
          s"${ConsumerArn.name} to the ARN of an existing consumer.")
      }
      if (name.isDefined && arn.isDefined) {
        throw new IllegalArgumentException(s"Options ${ConsumerName.name} ('${name.get}') and ${ConsumerArn.name} " +
          s"('${arn.get}') are both set: set ${ConsumerName.name} for a consumer the query manages, or " +
          s"${ConsumerArn.name} for an existing consumer it only reads through, not both.")
      }
      Some(FanOutOptions(name, arn, getOrDefault(DeregisterConsumerOnStop),
        getOrDefault(SubscribeToShardTimeoutSec) * 1000L, getOrDefault(SubscribeToShardMaxRetries)))
    }
  }
}
