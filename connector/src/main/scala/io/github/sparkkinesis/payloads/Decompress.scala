package io.github.sparkkinesis.payloads

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.{BinaryType, DataType}

/** The payload decompressed with `codec`; a payload that is not valid in that format is malformed. */
case class Decompress(child: Expression, codec: Codec, mode: PayloadMode) extends PayloadExpression {
  override def dataType: DataType = BinaryType
  override def prettyName: String = "decompress"

  override protected def decode(bytes: Array[Byte]): Any = codec.decompress(bytes)
  override protected def malformed(reason: String): Any = null
  override protected def withNewChildInternal(newChild: Expression): Decompress = copy(child = newChild)
}
