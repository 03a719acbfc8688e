package io.github.sparkkinesis.client

/**
 * A stream as a query names it: by name, or by ARN (another account's stream, say). The connector passes either form
 * through [[KinesisClient]]; Kinesis calls take the ARN where one was given.
 */
object StreamRef {

  /** The parts of a stream ARN, or of a stream consumer's ARN: the stream it names and where that stream lives. */
  final case class StreamArn(partition: String, region: String, account: String, streamName: String) {

    /** The stream's own ARN (of a consumer's ARN: the ARN of the stream it reads). */
    def arn: String = s"arn:$partition:kinesis:$region:$account:stream/$streamName"
  }

  /** `arn:PARTITION:kinesis:REGION:ACCOUNT:stream/NAME`, optionally followed by `/consumer/CONSUMER:CREATED`. */
  private val ArnPattern = "arn:([^:]+):kinesis:([^:]*):([^:]*):stream/([^/]+)(/consumer/.*)?".r

  def isArn(stream: String): Boolean = stream.startsWith("arn:")

  /** The stream a stream or consumer ARN names, and its partition, region and account; None for anything else. */
  def arnOf(ref: String): Option[StreamArn] = ref match {
    case ArnPattern(partition, region, account, name, _) => Some(StreamArn(partition, region, account, name))
    case _ => None
  }

  /** The stream's name: the one a stream or consumer ARN names, else the name itself. */
  def nameOf(stream: String): String = arnOf(stream).fold(stream)(_.streamName)
}
