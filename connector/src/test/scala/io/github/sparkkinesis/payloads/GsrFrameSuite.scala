package io.github.sparkkinesis.payloads

import java.util.UUID

import com.amazonaws.services.schemaregistry.common.configs.GlueSchemaRegistryConfiguration
import com.amazonaws.services.schemaregistry.serializers.SerializationDataEncoder
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.compat.JavaCollections._

/** The GSR frame against AWS's own encoder (the serde library's SerializationDataEncoder), both compressions. */
class GsrFrameSuite extends AnyFunSuite with Matchers {

  private val id = UUID.fromString("b7b4a7f2-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
  private val payload = ("an Avro payload, repeated to compress well; " * 20).getBytes("UTF-8")

  private def aws(compression: String): SerializationDataEncoder = new SerializationDataEncoder(
    new GlueSchemaRegistryConfiguration(Map[String, AnyRef]("region" -> "us-east-1", "compression" -> compression)
      .asJava))

  test("Given frames written by AWS's encoder, uncompressed and zlib, then they parse to its version id and payload") {
    Seq("NONE", "ZLIB").foreach { compression =>
      val framed = aws(compression).write(payload, id)
      framed(1) shouldBe (if (compression == "ZLIB") GsrFrame.ZlibCompression else GsrFrame.NoCompression)
      val parsed = GsrFrame.parse(framed).toOption.get
      parsed.versionId shouldBe id
      parsed.bytes.drop(parsed.offset).toSeq shouldBe payload.toSeq
    }
  }

  test("Given our frames, then they are AWS's bytes: uncompressed identical, zlib decompressing to the same payload") {
    GsrFrame.write(id, payload, zlib = false).toSeq shouldBe aws("NONE").write(payload, id).toSeq
    val ours = GsrFrame.write(id, payload, zlib = true)
    ours.take(GsrFrame.PrefixLength).toSeq shouldBe aws("ZLIB").write(payload, id).take(GsrFrame.PrefixLength).toSeq
    ours.length should be < payload.length
    GsrFrame.parse(ours).toOption.get.bytes.toSeq shouldBe payload.toSeq
  }
}
