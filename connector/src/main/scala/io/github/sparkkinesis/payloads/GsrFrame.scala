package io.github.sparkkinesis.payloads

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.util.UUID
import java.util.zip.{DataFormatException, Deflater, Inflater}

/**
 * The AWS Glue Schema Registry's record frame: header byte 3, a compression byte (0 none, 5 zlib), the writer's schema
 * version id as 16 big-endian bytes, then the payload (zlib-compressed when the compression byte says so).
 */
private[sparkkinesis] object GsrFrame {
  val HeaderVersion: Byte = 3
  val NoCompression: Byte = 0
  val ZlibCompression: Byte = 5

  /** Header, compression and version id: the bytes before the payload. */
  val PrefixLength: Int = 18

  /** A frame read: the writer's schema version, and the payload, decompressed: `bytes` from `offset` on. */
  final case class Parsed(versionId: UUID, bytes: Array[Byte], offset: Int)

  /** The frame of `bytes`, or why it is not one (Left: a reason for people). */
  def parse(bytes: Array[Byte]): Either[String, Parsed] =
    if (bytes.length < PrefixLength)
      Left(s"a Glue Schema Registry frame has at least $PrefixLength bytes, this record has ${bytes.length}")
    else if (bytes(0) != HeaderVersion)
      Left(s"the first byte is ${bytes(0) & 0xff}, not $HeaderVersion: the record is not framed by a Glue Schema " +
        "Registry serializer")
    else {
      val versionId = versionIdAt(bytes)
      bytes(1) match {
        // Not copied: the decoder reads the record's own bytes past the prefix.
        case NoCompression => Right(Parsed(versionId, bytes, PrefixLength))
        case ZlibCompression => inflate(bytes, PrefixLength).map(Parsed(versionId, _, 0))
        case other =>
          Left(s"compression byte ${other & 0xff} is neither $NoCompression (none) nor $ZlibCompression (zlib)")
      }
    }

  /** The version id of a frame whose prefix is whole, for messages about a record that failed later. */
  def versionIdOf(bytes: Array[Byte]): Option[UUID] =
    if (bytes.length < PrefixLength || bytes(0) != HeaderVersion) None else Some(versionIdAt(bytes))

  private def versionIdAt(frame: Array[Byte]): UUID = {
    val buffer = ByteBuffer.wrap(frame, 2, 16)
    new UUID(buffer.getLong, buffer.getLong)
  }

  /** `payload` framed with `versionId`, zlib-compressed when `zlib`. */
  def write(versionId: UUID, payload: Array[Byte], zlib: Boolean): Array[Byte] = {
    val body = if (zlib) deflate(payload) else payload
    val out = ByteBuffer.allocate(PrefixLength + body.length)
    out.put(HeaderVersion).put(if (zlib) ZlibCompression else NoCompression)
    out.putLong(versionId.getMostSignificantBits).putLong(versionId.getLeastSignificantBits).put(body)
    out.array()
  }

  private def inflate(bytes: Array[Byte], from: Int): Either[String, Array[Byte]] = {
    val inflater = new Inflater()
    try {
      inflater.setInput(bytes, from, bytes.length - from)
      val out = new ByteArrayOutputStream(math.max(64, (bytes.length - from) * 4))
      val chunk = new Array[Byte](8192)
      var stalled = false
      while (!inflater.finished() && !stalled) {
        val n = inflater.inflate(chunk)
        out.write(chunk, 0, n)
        // No output and no way to make any: the zlib stream ends before its end marker.
        stalled = n == 0 && (inflater.needsInput() || inflater.needsDictionary())
      }
      if (stalled) Left("the zlib-compressed payload is truncated")
      else Right(out.toByteArray)
    } catch {
      case e: DataFormatException => Left(s"the zlib-compressed payload is corrupt (${e.getMessage})")
    } finally inflater.end()
  }

  private def deflate(payload: Array[Byte]): Array[Byte] = {
    val deflater = new Deflater()
    try {
      deflater.setInput(payload)
      deflater.finish()
      val out = new ByteArrayOutputStream(payload.length / 2 + 64)
      val chunk = new Array[Byte](8192)
      while (!deflater.finished()) out.write(chunk, 0, deflater.deflate(chunk))
      out.toByteArray
    } finally deflater.end()
  }
}
