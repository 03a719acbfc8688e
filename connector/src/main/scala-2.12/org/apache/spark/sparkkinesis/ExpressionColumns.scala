package org.apache.spark.sparkkinesis

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression

/** A Column for a Catalyst expression: Spark 3.5's public constructor (the 2.13 twin of this file uses Spark 4's). */
object ExpressionColumns {
  def column(expression: Expression): Column = new Column(expression)

  /** The expression of `column`. */
  def expression(column: Column): Expression = column.expr
}
