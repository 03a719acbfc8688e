package io.github.sparkkinesis.payloads

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.sql.types.{BinaryType, StructType}

import io.github.sparkkinesis.KinesisSqlExtensions

/** The payload functions in SQL, registered by KinesisSqlExtensions through `spark.sql.extensions`. */
class PayloadSqlFunctionsSuite extends PayloadSuiteBase {

  override protected lazy val spark: SparkSession = SparkSession.builder().master("local[1]")
    .appName(getClass.getSimpleName).config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
    .config("spark.sql.extensions", classOf[KinesisSqlExtensions].getName).getOrCreate()

  private val logs =
    """{"messageType":"DATA_MESSAGE","owner":"111122223333","logGroup":"/aws/lambda/checkout","logStream":"s",
      |"subscriptionFilters":["f"],"logEvents":[{"id":"1","timestamp":1764201600123,"message":"START"},
      |{"id":"2","timestamp":1764201600456,"message":"END"}]}""".stripMargin

  private val change =
    """{"eventName":"INSERT","eventID":"e-1","tableName":"orders","dynamodb":{"ApproximateCreationDateTime":
      |1764201600123,"Keys":{"pk":{"S":"order#1"}},"NewImage":{"pk":{"S":"order#1"},"qty":{"N":"5"}}}}""".stripMargin

  private val readerSchema = GsrTestData.V2.toString.replace("'", "\\'")

  private def sql(query: String) = {
    records(gzip(utf8(logs))).createOrReplaceTempView("logs")
    records(utf8(change)).createOrReplaceTempView("changes")
    spark.sql(query)
  }

  test("Given the extension, then every payload function resolves in SQL, with no Spark built-in of its name") {
    val names = PayloadSqlFunctions.all.map(_.name)
    names should contain theSameElementsAs Seq(
      "cloudwatch_logs",
      "dynamodb_change",
      "decompress",
      "from_glue_schema_registry",
      "to_glue_schema_registry")
    // Registering a name Spark has would replace the built-in silently: a Spark that adds one must fail here.
    names.filter(n => FunctionRegistry.builtin.functionExists(FunctionIdentifier(n))) shouldBe empty
    names.filterNot(spark.catalog.functionExists) shouldBe empty
    spark.sql("DESCRIBE FUNCTION dynamodb_change").collect().map(_.getString(0)).mkString("\n") should
      include("dynamodb_change(data, itemSchema[, mode])")
  }

  test("Given CloudWatch Logs records, when decoded in SQL, then their log events are read, and explode resolves") {
    val row = sql("SELECT l.logGroup, l.logEvents.message FROM (SELECT cloudwatch_logs(data) AS l FROM logs) " +
      "WHERE l.messageType = 'DATA_MESSAGE'").head()
    (row.getString(0), row.getSeq[String](1)) shouldBe (("/aws/lambda/checkout", Seq("START", "END")))
    // Running a generator takes an RDD, which this suite's Spark 3.5 test classpath (Jackson) cannot start: the
    // explode is resolved here and run by the Python tests.
    sql("SELECT explode(cloudwatch_logs(data, 'FAILFAST').logEvents) AS e FROM logs").schema("e").dataType shouldBe
      StructType.fromDDL("id STRING, timestamp TIMESTAMP, message STRING")
  }

  test("Given DynamoDB change records and compressed payloads, then SQL decodes them with a DDL schema and a codec") {
    val c = sql("SELECT c.eventName, c.newImage.qty, c.keys.pk FROM " +
      "(SELECT dynamodb_change(data, 'pk STRING, qty INT', 'FAILFAST') AS c FROM changes)").head()
    (c.getString(0), c.getInt(1), c.getString(2)) shouldBe (("INSERT", 5, "order#1"))
    sql("SELECT dynamodb_change(data, 'pk STRING').eventName FROM changes").head().getString(0) shouldBe "INSERT"
    sql("SELECT CAST(decompress(data, 'gzip') AS STRING) FROM logs").head().getString(0) shouldBe logs
    sql("SELECT decompress(data, 'zlib') FROM logs").head().isNullAt(0) shouldBe true
  }

  test("Given the Glue Schema Registry functions with options as map(...), then they resolve to their types") {
    // Given a reader schema in the options, so that resolving the query asks no registry
    val options = s"map('avroSchema', '$readerSchema', 'kinesis.region', 'us-east-1', 'errorColumn', 'why')"
    // When each is resolved
    val decoded = sql(s"SELECT from_glue_schema_registry(data, 'shop', 'orders', $options) AS o FROM logs").schema
    val framed = sql("SELECT to_glue_schema_registry(named_struct('id', 'a', 'amount', 1L), 'shop', 'orders', " +
      "map('kinesis.region', 'us-east-1', 'compression', 'zlib')) AS f FROM logs").schema
    // Then the decoded struct is the reader's fields and the error column, the framed value binary
    decoded("o").dataType shouldBe StructType.fromDDL("id STRING, amount BIGINT, currency STRING, why STRING")
    framed("f").dataType shouldBe BinaryType
  }

  test("Given wrong arguments in SQL, then the message names the function, the argument and what it takes") {
    failureOf(sql("SELECT cloudwatch_logs(data, 'FAILFAST', 'x') FROM logs")) should
      include("cloudwatch_logs takes 1 to 2 arguments (data[, mode]), not 3")
    failureOf(sql("SELECT decompress(data) FROM logs")) should include("decompress takes 2 to 3 arguments")
    failureOf(sql("SELECT decompress(data, CAST(data AS STRING)) FROM logs")) should
      include("decompress: argument codec must be a constant string")
    failureOf(sql("SELECT dynamodb_change(data, 'pk STRING', 'LENIENT') FROM changes")) should include("LENIENT")
    val unknownOption = "SELECT to_glue_schema_registry(named_struct('id', 'a'), 'r', 's', map('nope', 'x')) FROM logs"
    failureOf(sql(unknownOption)) should include("to_glue_schema_registry has no option 'nope'")
  }
}
