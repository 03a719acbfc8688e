package org.apache.spark.sql.sparkkinesis

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression

/** A Column of a Catalyst expression and back, on Spark 3.5 (the 2.13 twin of this file speaks Spark 4's API). */
object ColumnExpressions {
  def column(expression: Expression): Column = new Column(expression)

  def expression(column: Column): Expression = column.expr
}
