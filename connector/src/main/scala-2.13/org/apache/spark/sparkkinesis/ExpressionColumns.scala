package org.apache.spark.sparkkinesis

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * A Column for a Catalyst expression. Spark 4 builds columns from the API's own nodes and keeps the wrapper for a
 * Catalyst expression to its own packages (4.0, 4.1 and 4.2 alike), hence this file's package.
 */
object ExpressionColumns {
  def column(expression: Expression): Column = ExpressionUtils.column(expression)

  /** The expression of `column` (on Spark 4, a placeholder the analyzer resolves with the column). */
  def expression(column: Column): Expression = ExpressionUtils.expression(column)
}
