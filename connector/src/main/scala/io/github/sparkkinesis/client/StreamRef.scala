package io.github.sparkkinesis.client

/**
 * A stream as a query names it: by name, or by ARN (another account's stream, say). The connector passes either form
 * through [[KinesisClient]]; Kinesis calls take the ARN where one was given.
 */
object StreamRef {
  def isArn(stream: String): Boolean = stream.startsWith("arn:")

  /** The stream's name: what follows `stream/` in an ARN, else the name itself. */
  def nameOf(stream: String): String =
    if (isArn(stream)) stream.substring(stream.lastIndexOf("stream/") + "stream/".length) else stream
}
