package io.github.sparkkinesis

import java.util.ServiceLoader

import io.github.sparkkinesis.compat.JavaCollections._

import org.apache.spark.sql.sources.DataSourceRegister
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class FormatNamesSuite extends AnyFunSuite with Matchers {

  test("given the JAR's service file, then Spark finds the connector as aws-kinesis and as kinesis, one class each") {
    val ours = ServiceLoader.load(classOf[DataSourceRegister]).asScala.toSeq
      .filter(_.getClass.getName.startsWith("io.github.sparkkinesis."))
    ours.map(r => r.shortName() -> r.getClass.getName).toMap shouldBe Map(
      "aws-kinesis" -> classOf[KinesisSourceProvider].getName,
      "kinesis" -> classOf[KinesisShortNameProvider].getName)
  }
}
