package io.github.sparkkinesis.options

/**
 * How a query reads through enhanced fan-out: through a consumer it manages (`consumerName`: registered if absent,
 * deregistered on stop if it registered it and `deregisterOnStop`) or through an existing one (`consumerArn`). Exactly
 * one of the two is set: the registry's rule refuses other options when the DataFrame is created.
 */
final case class FanOutOptions(
    consumerName: Option[String],
    consumerArn: Option[String],
    deregisterOnStop: Boolean,
    subscribeTimeoutMs: Long,
    maxRetries: Int)

object FanOutOptions {
  import KinesisOptionsRegistry._

  /** The fan-out options when `kinesis.consumerType` asks for SubscribeToShard (or EFO). */
  private[options] def parse(options: OptionValues): Option[FanOutOptions] = {
    import options.{get, getOrDefault}
    if (!FanOutConsumerTypes.exists(_.equalsIgnoreCase(getOrDefault(ConsumerType)))) None
    else {
      val (name, arn) = (get(ConsumerName), get(ConsumerArn))
      Some(FanOutOptions(
        name,
        arn,
        getOrDefault(DeregisterConsumerOnStop),
        getOrDefault(SubscribeToShardTimeout),
        getOrDefault(SubscribeToShardMaxRetries)))
    }
  }
}
