package io.github.sparkkinesis.payloads

import java.io.IOException
import java.util.zip.ZipException

import com.fasterxml.jackson.core.JsonProcessingException
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.UnaryExpression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.BinaryType

/**
 * A Catalyst expression that decodes a binary payload, one record per call, applying its [[PayloadMode]] to a record it
 * cannot decode. Interpreted (CodegenFallback): the work is the parsing itself, which generated code would only call.
 */
abstract class PayloadExpression extends UnaryExpression with CodegenFallback {

  def mode: PayloadMode

  /** The record's value; throws [[PayloadError]] (or the decompressor's or parser's IOException) when it cannot. */
  protected def decode(bytes: Array[Byte]): Any

  /** The value of a record that cannot be decoded, in PERMISSIVE mode. */
  protected def malformed(reason: String): Any

  override def checkInputDataTypes(): TypeCheckResult =
    if (child.dataType == BinaryType) TypeCheckResult.TypeCheckSuccess
    else
      TypeCheckResult.TypeCheckFailure(
        s"$prettyName takes a binary column (such as the source's data), not ${child.dataType.simpleString}: " +
          s"pass the binary column, or cast a string column to binary")
  override def nullable: Boolean = true

  override protected def nullSafeEval(input: Any): Any = {
    val reason =
      try return decode(input.asInstanceOf[Array[Byte]])
      catch {
        case e: PayloadError => e.getMessage
        case e: JsonProcessingException => s"the JSON is malformed: ${e.getOriginalMessage}"
        case e: ZipException => s"the compressed data is corrupt: ${e.getMessage}"
        case e: IOException => s"the compressed data is corrupt or truncated: $e"
        case e: ArithmeticException => s"a number is out of range: ${e.getMessage}"
      }
    mode match {
      case PayloadMode.FailFast => throw new MalformedPayloadException(prettyName, reason)
      case PayloadMode.Permissive => malformed(reason)
    }
  }
}
