package io.github.sparkkinesis.payloads

import java.io.{ByteArrayOutputStream, OutputStream}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.{DeflaterOutputStream, GZIPOutputStream}

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

/** A local session and records shaped like the source's `data` column, for the payload functions' suites. */
abstract class PayloadSuiteBase extends AnyFunSuite with Matchers with BeforeAndAfterAll {

  protected lazy val spark: SparkSession = SparkSession.builder().master("local[1]").appName(getClass.getSimpleName)
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1").getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  /** One row per payload, in a binary column `data`. */
  protected def records(payloads: Array[Byte]*): DataFrame = {
    val rows = new java.util.ArrayList[Row]()
    payloads.foreach(p => rows.add(Row(p)))
    spark.createDataFrame(rows, org.apache.spark.sql.types.StructType.fromDDL("data BINARY"))
  }

  protected def utf8(text: String): Array[Byte] = text.getBytes(UTF_8)

  protected def gzip(bytes: Array[Byte]): Array[Byte] = compress(bytes, new GZIPOutputStream(_))
  protected def zlib(bytes: Array[Byte]): Array[Byte] = compress(bytes, new DeflaterOutputStream(_))

  private def compress(bytes: Array[Byte], stream: ByteArrayOutputStream => OutputStream): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val compressing = stream(out)
    compressing.write(bytes)
    compressing.close()
    out.toByteArray
  }

  /**
   * Checks that each row decoded from a malformed case (named, with the reason expected in its `error` field) has that
   * reason, and checks with `empty` that the other fields are empty.
   */
  protected def assertMalformed(rows: Seq[Row], cases: Seq[(String, (Array[Byte], String))])(empty: Row => Unit): Unit =
    rows.zip(cases).foreach { case (row, (name, (_, reason))) =>
      withClue(name) {
        row.getAs[String]("error") should include(reason)
        empty(row)
      }
    }

  /** The messages of the failure `body` ends in and of its causes, joined: where the task's reason is. */
  protected def failureOf(body: => Any): String = {
    val failure = intercept[Exception](body)
    Iterator.iterate[Throwable](failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
  }
}
