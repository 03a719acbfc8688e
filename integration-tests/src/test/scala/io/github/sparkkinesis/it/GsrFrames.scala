package io.github.sparkkinesis.it

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.util.UUID
import java.util.zip.DeflaterOutputStream

/** Records framed for the Glue Schema Registry by the byte layout AWS documents, written here independently. */
object GsrFrames {

  /** The GSR frame: 3, compression (0 none, 5 zlib), the version id's 16 bytes, the payload (deflated for zlib). */
  def frame(id: UUID, payload: Array[Byte], zlib: Boolean = false): Array[Byte] = {
    val body = if (!zlib) payload
    else {
      val out = new ByteArrayOutputStream()
      val deflater = new DeflaterOutputStream(out)
      deflater.write(payload)
      deflater.close()
      out.toByteArray
    }
    ByteBuffer.allocate(18 + body.length).put(3.toByte).put((if (zlib) 5 else 0).toByte)
      .putLong(id.getMostSignificantBits).putLong(id.getLeastSignificantBits).put(body).array()
  }
}
