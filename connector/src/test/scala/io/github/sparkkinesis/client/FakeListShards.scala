package io.github.sparkkinesis.client

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

import io.github.sparkkinesis.compat.JavaCollections._

import software.amazon.awssdk.services.kinesis.model.{
  HashKeyRange => SdkHashKeyRange,
  ListShardsRequest,
  ListShardsResponse,
  SequenceNumberRange,
  Shard
}

/**
 * ListShards as AWS answers one request of [[FakeKinesisClient]]: pages of at most 1,000 shards (MaxResults, 1 to
 * 10,000, asks for fewer, never more), a NextToken while shards remain, and the API reference's refusals
 * (InvalidArgumentException): NextToken together with StreamName, StreamARN, ExclusiveStartShardId, ShardFilter or
 * StreamCreationTimestamp (the token alone names the stream and the filter: apache/beam#33478 sent the filter again on
 * the second page of a stream of more than 1,000 shards), and a first page that names no stream. The connector sends
 * neither ShardFilter nor ExclusiveStartShardId, so neither is modelled: a first page with one fails as not modelled,
 * for a test to notice.
 */
private[sparkkinesis] object FakeListShards {

  private val MaxPage = 1000

  /** The page `request` asks for, of the shards `shardsOf(streamName, streamArn)` resolves, in shard id order. */
  def answer(
      request: ListShardsRequest,
      shardsOf: (Option[String], Option[String]) => Seq[ShardDescription]): ListShardsResponse = {
    val maxResults = Option(request.maxResults).map(_.intValue).getOrElse(MaxPage)
    if (maxResults < 1 || maxResults > 10000) refuse(s"MaxResults $maxResults is not in 1..10000")
    val (stream, from) = Option(request.nextToken) match {
      case Some(token) =>
        val together = Seq(
          "StreamName" -> request.streamName,
          "StreamARN" -> request.streamARN,
          "ExclusiveStartShardId" -> request.exclusiveStartShardId,
          "ShardFilter" -> request.shardFilter,
          "StreamCreationTimestamp" -> request.streamCreationTimestamp).collect { case (name, v) if v != null => name }
        together.headOption.foreach(name => refuse(s"NextToken and $name cannot be provided together."))
        decode(token)
      case None =>
        if (request.shardFilter != null || request.exclusiveStartShardId != null) {
          throw new UnsupportedOperationException(
            "FakeListShards models neither ShardFilter nor ExclusiveStartShardId: the connector sends neither")
        }
        (Option(request.streamARN).getOrElse(request.streamName), 0)
    }
    val all =
      if (request.nextToken == null) shardsOf(Option(request.streamName), Option(request.streamARN))
      else shardsOf(if (StreamRef.isArn(stream)) None else Some(stream), Some(stream).filter(StreamRef.isArn))
    val page = all.slice(from, from + math.min(maxResults, MaxPage))
    val next = from + page.size
    ListShardsResponse.builder()
      .shards(page.map(toSdk).asJava)
      .nextToken(if (next < all.size) encode(stream, next) else null)
      .build()
  }

  private def refuse(message: String): Nothing =
    throw new KinesisClientException(s"ListShards: $message (InvalidArgumentException)")

  private def encode(stream: String, from: Int): String =
    Base64.getUrlEncoder.encodeToString(s"$from/$stream".getBytes(UTF_8))

  private def decode(token: String): (String, Int) =
    try {
      val Array(from, stream) = new String(Base64.getUrlDecoder.decode(token), UTF_8).split("/", 2)
      (stream, from.toInt)
    } catch {
      case _: IllegalArgumentException | _: MatchError => refuse(s"NextToken '$token' is not valid")
    }

  private def toSdk(d: ShardDescription): Shard = Shard.builder()
    .shardId(d.shardId)
    .parentShardId(d.parentShardId.orNull)
    .adjacentParentShardId(d.adjacentParentShardId.orNull)
    .hashKeyRange(SdkHashKeyRange.builder().startingHashKey(d.hashKeyRange.startingHashKey.toString)
      .endingHashKey(d.hashKeyRange.endingHashKey.toString).build())
    .sequenceNumberRange(SequenceNumberRange.builder().startingSequenceNumber(d.startingSequenceNumber)
      .endingSequenceNumber(d.endingSequenceNumber.orNull).build())
    .build()
}
