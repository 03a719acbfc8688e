package org.apache.spark.sql.sparkkinesis

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * A Column of a Catalyst expression and back, on Spark 4 (classic Spark, not Spark Connect's client): in a package of
 * Spark's own because ExpressionUtils is private to org.apache.spark.sql.
 */
object ColumnExpressions {
  def column(expression: Expression): Column = ExpressionUtils.column(expression)

  def expression(column: Column): Expression = ExpressionUtils.expression(column)
}
