package io.github.sparkkinesis.client

/** Every failure a [[KinesisClient]] reports. Messages name the stream or shard and say what to do. */
class KinesisClientException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)

/** Kinesis refused the call for now (ProvisionedThroughputExceeded, LimitExceeded): back off and try again. */
final class ThrottledException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)

/** The shard iterator is older than five minutes: ask for a new one from the last position read. */
final class ExpiredIteratorException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)

/** The stream, or a shard of it, does not exist (or is not visible to these credentials). */
final class ResourceMissingException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)

/**
 * Kinesis answered with an error that sending the same request again would meet again (a request it finds invalid, a
 * KMS key it cannot use, a bare server error): unlike throttling or a failure on the way, not worth retrying for long.
 */
final class RequestRefusedException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)

/** The credentials were rejected or lack a permission; retrying will not help. */
final class AccessException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)

/**
 * Kinesis refused an AT_TIMESTAMP iterator because the timestamp lies in its future (the clock that chose the timestamp
 * runs ahead of the service's): no record can have arrived at or after it yet.
 */
final class TimestampInFutureException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)

/**
 * SubscribeToShard refused because a subscription of the same consumer to the same shard is still open, or the last
 * subscribe was less than a second or so ago (ResourceInUseException): wait and subscribe again.
 */
final class SubscriptionBusyException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)

/**
 * Nothing answered at the endpoint: its host name does not resolve, or the connection was refused or found no route. A
 * query that has never reached Kinesis fails at once on this (a wrong kinesis.endpointUrl or region, a missing proxy or
 * VPC endpoint); one that has read before retries it as a passing failure.
 */
final class UnreachableException(message: String, cause: Throwable = null)
    extends KinesisClientException(message, cause)
