package io.github.sparkkinesis.payloads

import org.apache.spark.sql.functions.col

import io.github.sparkkinesis.payloads.functions.decompress

/** decompress with each codec, on valid and corrupt payloads. */
class DecompressSuite extends PayloadSuiteBase {

  private val text = utf8("""{"event":"click","note":"café"}""" * 20)

  private val compressed = Map(
    "gzip" -> gzip(text),
    "zlib" -> zlib(text),
    "zstd" -> com.github.luben.zstd.Zstd.compress(text))

  test("Given payloads compressed with gzip, zlib and zstd, when decompressed with their codec, then bytes are back") {
    compressed.foreach { case (codec, payload) =>
      withClue(codec) {
        records(payload).select(decompress(col("data"), codec.toUpperCase)).head().getAs[Array[Byte]](0) shouldBe text
      }
    }
    // Several members or frames decompress to their concatenation (zstd's one-call path takes one frame only).
    val zstd = (text: String) => com.github.luben.zstd.Zstd.compress(utf8(text))
    records(gzip(utf8("a")) ++ gzip(utf8("b")), zstd("a") ++ zstd("b"))
      .select(decompress(col("data"), "gzip").as("gzip"), decompress(col("data"), "zstd").as("zstd")).collect()
      .map(r =>
        (
          Option(r.getAs[Array[Byte]](0)).map(new String(_, "UTF-8")),
          Option(r.getAs[Array[Byte]](1)).map(new String(_, "UTF-8")))) shouldBe
      Array((Some("ab"), None), (None, Some("ab")))
  }

  test("Given a payload not in the codec's format, when PERMISSIVE, then null; when FAILFAST, the query fails") {
    val corrupt = Seq(text, compressed("gzip").dropRight(10), compressed("zlib").take(5), compressed("zstd").drop(4))
    Seq("gzip", "gzip", "zlib", "zstd").zip(corrupt).foreach { case (codec, payload) =>
      withClue(codec) {
        records(payload).select(decompress(col("data"), codec)).head().isNullAt(0) shouldBe true
      }
    }
    failureOf(records(text).select(decompress(col("data"), "zlib", "FAILFAST")).collect()) should
      include("decompress: the compressed data is corrupt")
  }

  test("Given a codec it does not know, then the column is refused naming the codecs") {
    the[IllegalArgumentException] thrownBy decompress(col("data"), "snappy") should have message
      "decompress: codec 'snappy' is not one of gzip, zlib, zstd; pass one of them"
  }
}
