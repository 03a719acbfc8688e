package io.github.sparkkinesis.payloads

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, InputStream}
import java.util.Locale
import java.util.zip.{GZIPInputStream, InflaterInputStream}

/** A compression format of record payloads. */
sealed abstract class Codec(val name: String) extends Serializable {

  /** A stream of the decompressed bytes of `in`. */
  def open(in: InputStream): InputStream

  /** The decompressed bytes of `bytes`. */
  def decompress(bytes: Array[Byte]): Array[Byte] = {
    val in = open(new ByteArrayInputStream(bytes))
    try {
      val out = new ByteArrayOutputStream(math.max(64, bytes.length * 4))
      val buffer = new Array[Byte](8192)
      var n = in.read(buffer)
      while (n >= 0) {
        out.write(buffer, 0, n)
        n = in.read(buffer)
      }
      out.toByteArray
    } finally in.close()
  }
}

object Codec {

  /** RFC 1952 (what CloudWatch Logs subscriptions send); concatenated members decompress to their concatenation. */
  case object Gzip extends Codec("gzip") {
    def open(in: InputStream): InputStream = new GZIPInputStream(in, 8192)
  }

  /** RFC 1950 (zlib header and checksum, what java.util.zip.Deflater and Python's zlib.compress write). */
  case object Zlib extends Codec("zlib") {
    def open(in: InputStream): InputStream = new InflaterInputStream(in)
  }

  /**
   * Zstandard frames, through zstd-jni, which the connector does not ship: every Spark release carries it (Spark's own
   * `zstd` codec for shuffle and event logs is built on it), so it is loaded from the cluster's classpath.
   */
  case object Zstd extends Codec("zstd") {
    def open(in: InputStream): InputStream = new com.github.luben.zstd.ZstdInputStream(in)

    // One native call when the frame's header gives its size (zstd's tools and libraries write it by default): a
    // stream per record costs a native context and large buffers, ten times slower on small records. Anything the
    // one call refuses (several frames, a corrupt frame) goes through the stream, whose verdict stands.
    override def decompress(bytes: Array[Byte]): Array[Byte] = {
      val size = com.github.luben.zstd.Zstd.decompressedSize(bytes)
      if (size <= 0 || size > Int.MaxValue - 8) super.decompress(bytes)
      else
        try com.github.luben.zstd.Zstd.decompress(bytes, size.toInt)
        catch { case _: com.github.luben.zstd.ZstdException => super.decompress(bytes) }
    }
  }

  val all: Seq[Codec] = Seq(Gzip, Zlib, Zstd)

  /** The codec `name` names, in any case. */
  def parse(name: String): Codec =
    all.find(c => Option(name).exists(_.trim.toLowerCase(Locale.ROOT) == c.name)).getOrElse {
      throw new IllegalArgumentException(
        s"decompress: codec '$name' is not one of ${all.map(_.name).mkString(", ")}; pass one of them")
    }

  /** Whether `bytes` begin with gzip's magic number. */
  def isGzip(bytes: Array[Byte]): Boolean = bytes.length >= 2 && bytes(0) == 0x1f.toByte && bytes(1) == 0x8b.toByte
}
