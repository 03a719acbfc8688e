package io.github.sparkkinesis.options

import io.github.sparkkinesis.client.StreamRef

/**
 * How a query reads through enhanced fan-out: through a consumer it manages (`consumerName`: registered if absent, with
 * `tags` besides the connector's own, deregistered on stop if it registered it and `deregisterOnStop`) or through an
 * existing one (`consumerArn`, a consumer of the query's one stream). Exactly one of the two is set: the registry's
 * rule refuses other options when the DataFrame is created.
 */
final case class FanOutOptions(
    consumerName: Option[String],
    consumerArn: Option[String],
    deregisterOnStop: Boolean,
    subscribeTimeoutMs: Long,
    maxRetries: Int,
    tags: Map[String, String] = Map.empty)

object FanOutOptions {
  import KinesisOptionsRegistry._

  /**
   * The fan-out options when `kinesis.consumerType` asks for SubscribeToShard (or EFO); refuses a `kinesis.consumerArn`
   * that is not a consumer of the query's one stream (`streams`, by name or ARN, in `region` when known).
   */
  private[options] def parse(
      options: OptionValues,
      streams: Seq[String],
      region: Option[String]): Option[FanOutOptions] = {
    import options.{get, getOrDefault}
    if (!FanOutConsumerTypes.exists(_.equalsIgnoreCase(getOrDefault(ConsumerType)))) None
    else {
      val (name, arn) = (get(ConsumerName), get(ConsumerArn))
      arn.foreach(requireConsumerOf(_, streams, region))
      Some(FanOutOptions(
        name,
        arn,
        getOrDefault(DeregisterConsumerOnStop),
        getOrDefault(SubscribeToShardTimeout),
        getOrDefault(SubscribeToShardMaxRetries),
        get(ConsumerTagsOption).getOrElse(Map.empty)))
    }
  }

  /**
   * Fails unless `consumerArn` names a consumer of the one stream read: a consumer of another stream would serve that
   * stream's records under this stream's name (shard ids repeat across streams). The stream is compared by name, and by
   * account and region where the query knows them (from `kinesis.streamARN`, or `kinesis.region` for the region).
   */
  private def requireConsumerOf(consumerArn: String, streams: Seq[String], region: Option[String]): Unit = {
    if (streams.size > 1) {
      throw new IllegalArgumentException(s"Option ${ConsumerArn.name} names one stream's consumer, but the query " +
        s"reads ${streams.size} streams (${streams.mkString(", ")}): set ${ConsumerName.name} instead, and the query " +
        "registers a consumer of that name on each stream.")
    }
    val stream = streams.head
    val readName = StreamRef.nameOf(stream)
    // The option's pattern has been checked: the ARN names a stream.
    val owner = StreamRef.arnOf(consumerArn).get
    val read = StreamRef.arnOf(stream)
    val account = read.map(_.account)
    val readRegion = read.map(_.region).orElse(region)
    if (readName != owner.streamName || !account.forall(_ == owner.account) || !readRegion.forall(_ == owner.region)) {
      val where = account.fold("")(a => s" of account $a") + readRegion.fold("")(r => s" in $r")
      val givenBy =
        if (read.isDefined) s"option ${StreamARN.name}"
        else if (region.isDefined) s"options ${StreamName.name} and ${Region.name}"
        else s"option ${StreamName.name}"
      throw new IllegalArgumentException(otherStreamsConsumer(
        consumerArn,
        s"'${owner.streamName}' of account ${owner.account} in ${owner.region}",
        s"'$readName'$where ($givenBy)",
        readName,
        "<its ARN>"))
    }
  }

  /**
   * Why `consumerArn`, a consumer of stream `owner`, cannot serve the query's stream `read` (`readName`, whose
   * consumers `aws kinesis list-stream-consumers --stream-arn <readArn>` lists), and what to set instead.
   */
  private[sparkkinesis] def otherStreamsConsumer(
      consumerArn: String,
      owner: String,
      read: String,
      readName: String,
      readArn: String): String =
    s"Option ${ConsumerArn.name} is '$consumerArn', a consumer of stream $owner, but the query reads stream $read: a " +
      "consumer serves only its own stream's shards, and shard ids repeat across streams, so the query would read " +
      s"the other stream's records labelled as stream '$readName'. Give the ARN of a consumer of stream '$readName' " +
      s"(aws kinesis list-stream-consumers --stream-arn $readArn), or set ${ConsumerName.name} instead of " +
      s"${ConsumerArn.name} to let the connector register a consumer of that name on stream '$readName'."
}
