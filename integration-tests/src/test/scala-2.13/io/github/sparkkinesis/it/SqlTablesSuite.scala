package io.github.sparkkinesis.it

import scala.concurrent.duration._

import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import SinkHarness.{keyed, readBack, sinkOptions}

/**
 * Catalog tables `USING aws-kinesis` on Spark 4 (whose session catalog hands such a table to the connector): streaming
 * and batch reads, INSERT INTO, streaming writes into a table, secrets kept out of DESCRIBE and SHOW CREATE TABLE, and
 * the statements a stream cannot serve refused in words. The tests share one source stream and its table, in order.
 */
class SqlTablesSuite extends AnyFunSuite with Matchers with SparkIntegrationSuite {

  /** Values of secret options, each unique, so that no other text of DESCRIBE or SHOW CREATE TABLE contains them. */
  private val secretKey = "sql-tables-secret-value-5ad1"
  private val externalId = "sql-tables-external-id-77c2"
  private val sessionToken = "sql-tables-session-token-e03b"

  private lazy val source = TestStreams.createStream("it-sql-orders", shards = 2)
  private lazy val puts = TestStreams.putStrings(source, TestStreams.testRecords("order", n = 200, keys = 13))
  private def expected: Seq[(String, String)] = puts.map(p => (p.partitionKey, p.payload))

  /** The source's columns as a CREATE TABLE column list. */
  private val sourceColumns =
    "data BINARY, streamName STRING, partitionKey STRING, sequenceNumber STRING, " +
      "approximateArrivalTimestamp TIMESTAMP, shardId STRING, subSequenceNumber BIGINT, stream STRING"

  private def sqlOptions(options: Map[String, String]): String =
    options.map { case (k, v) => s"'$k' '$v'" }.mkString("OPTIONS (", ", ", ")")

  /** The source's options on the plain endpoint, with a secret key of its own (the emulator checks only the key id). */
  private def readOptions(stream: String) =
    SparkHarness.kinesisOptions(stream, "TRIM_HORIZON") + ("kinesis.awsSecretKey" -> secretKey)

  /** The tables the suite created, dropped after it. */
  private val created = scala.collection.mutable.Set.empty[String]

  private def createTable(name: String, options: Map[String, String]): Unit = {
    created += name
    spark.sql(s"CREATE TABLE $name USING `aws-kinesis` ${sqlOptions(options)}")
  }

  /** A table over a new stream on the TLS endpoint, which the sink's producer needs. */
  private def createSinkTable(name: String): String = {
    val stream = TestStreams.createStream(s"it-sql-$name", shards = 2)
    createTable(name, sinkOptions(Some(stream), "kinesis.awsSecretKey" -> secretKey))
    stream
  }

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    puts
    createTable("orders", readOptions(source))
  }

  override protected def afterAll(): Unit = {
    try created.foreach(name => spark.sql(s"DROP TABLE IF EXISTS $name"))
    finally super.afterAll()
  }

  /** The message of what `statement` throws, and of its causes. */
  private def refusal(statement: => Any): String =
    Iterator.iterate[Throwable](intercept[Exception](statement))(_.getCause).takeWhile(_ != null)
      .map(_.getMessage).mkString(" / ")

  test("Given a table USING aws-kinesis, when spark.readStream.table reads it, then every record arrives once") {
    val (query, sink) = startCollecting(spark.readStream.table("orders"))
    assertReadsExactly(query, sink, puts)
  }

  test("Given a table USING aws-kinesis, when SELECT reads it in batch, then it reads each record once, to the tip") {
    val rows = spark.sql("SELECT CAST(data AS STRING) AS payload, partitionKey FROM orders").collect()
    RecordChecks.assertExactlyOnce(expected, rows.map(r => (r.getString(1), r.getString(0))).toSeq, "SELECT")
  }

  test("Given a second table, when INSERT INTO copies the first into it and adds VALUES, and insertInto and " +
    "writeTo append, then the stream holds each row once") {
    val copy = createSinkTable("copy")
    spark.sql("INSERT INTO copy SELECT data, partitionKey FROM orders")
    spark.sql("INSERT INTO copy (data, partitionKey) VALUES ('value-1', 'key-v1'), ('value-2', 'key-v2')")
    spark.sql("SELECT 'value-3' AS data, 'key-v3' AS partitionKey").write.insertInto("copy")
    spark.sql("SELECT 'value-4' AS data, 'key-v4' AS partitionKey").writeTo("copy").append()
    RecordChecks.assertExactlyOnce(
      expected ++ (1 to 4).map(i => s"key-v$i" -> s"value-$i"),
      keyed(readBack(copy)._1),
      s"rows in $copy")
  }

  test("Given a streaming query reading one table, when it writes with writeStream.toTable, then the other " +
    "table's stream holds every record once") {
    val target = createSinkTable("streamed")
    val query = spark.readStream.table("orders").select("data", "partitionKey").writeStream
      .option("checkpointLocation", newCheckpointDir()).trigger(Trigger.AvailableNow()).toTable("streamed")
    query.awaitTermination(120.seconds.toMillis) shouldBe true
    query.exception shouldBe None
    RecordChecks.assertExactlyOnce(expected, keyed(readBack(target)._1), s"rows in $target")
  }

  test("Given tables with secret options, when DESCRIBE TABLE EXTENDED, SHOW CREATE TABLE and SHOW TBLPROPERTIES " +
    "show them, then no secret value appears, and SHOW CREATE TABLE names the provider and the stream") {
    createTable(
      "assumed",
      readOptions("it-sql-assumed") ++ Map(
        "kinesis.sessionToken" -> sessionToken,
        "kinesis.stsRoleArn" -> "arn:aws:iam::123456789012:role/reader",
        "kinesis.stsExternalId" -> externalId))
    for (table <- Seq("orders", "assumed")) {
      val shown = Seq(s"DESCRIBE TABLE EXTENDED $table", s"SHOW CREATE TABLE $table", s"SHOW TBLPROPERTIES $table")
        .map(statement => statement -> spark.sql(statement).collect().map(_.mkString(" | ")).mkString("\n"))
      for ((statement, text) <- shown; secret <- Seq(secretKey, externalId, sessionToken, TestStreams.AccessKeyId))
        withClue(s"$statement shows '$secret':\n$text\n")(text.contains(secret) shouldBe false)
      shown(1)._2 should (include("USING aws-kinesis") and include("'kinesis.awsSecretKey' = '*********(redacted)'"))
    }
    spark.sql("SHOW CREATE TABLE orders").head().getString(0) should include(s"'kinesis.streamName' = '$source'")
  }

  test("Given bad options, when CREATE TABLE or INSERT INTO uses them, then they are refused with the messages " +
    "format(\"aws-kinesis\") gives") {
    val badStart = readOptions(source) + ("kinesis.startingPosition" -> "NOPE")
    val byFormat = refusal(spark.read.format("aws-kinesis").options(badStart).load())
    refusal(createTable("bad_start", badStart)) shouldBe byFormat
    byFormat should include("kinesis.startingPosition")
    spark.catalog.tableExists("bad_start") shouldBe false

    // The sink's own check (its producer speaks HTTPS only) runs when the table is written to, as for format().save()
    val plain = readOptions(TestStreams.createStream("it-sql-plain", shards = 1))
    createTable("plain", plain)
    val rows = spark.sql("SELECT 'v' AS data, 'k' AS partitionKey")
    refusal(spark.sql("INSERT INTO plain SELECT 'v' AS data, 'k' AS partitionKey")) shouldBe
      refusal(rows.write.format("aws-kinesis").options(plain).save())
  }

  test("Given a table, when a statement would change or remove records, or give it other columns or partitions, " +
    "then it is refused, saying what to use instead where the connector is asked, and nothing is written") {
    val target = createSinkTable("refusing")
    val options = sqlOptions(readOptions(source))
    val appendOnly = "append-only"
    val refused = Seq(
      "INSERT OVERWRITE refusing SELECT data, partitionKey FROM orders" -> Seq(appendOnly, "Use INSERT INTO"),
      "TRUNCATE TABLE refusing" -> Seq(appendOnly, "Add rows with INSERT INTO"),
      "DELETE FROM refusing" -> Seq(appendOnly, "Add rows with INSERT INTO"),
      "DELETE FROM refusing WHERE partitionKey = 'key-1'" -> Seq(appendOnly, "Add rows with INSERT INTO"),
      s"CREATE TABLE with_columns (data BINARY, partitionKey STRING) USING `aws-kinesis` $options" ->
        Seq("fixed columns", "no column list and no AS SELECT"),
      s"CREATE TABLE copied USING `aws-kinesis` $options AS SELECT data, partitionKey FROM orders" ->
        Seq("fixed columns", "no column list and no AS SELECT"),
      s"CREATE TABLE partitioned ($sourceColumns) USING `aws-kinesis` PARTITIONED BY (partitionKey) $options" ->
        Seq("cannot be partitioned", "Remove PARTITIONED BY"),
      // Spark's own refusals: it resolves neither UPDATE nor MERGE against a table that accepts any columns, and
      // wants columns before partitioning.
      "UPDATE refusing SET partitionKey = 'other'" -> Seq("does not support UPDATE TABLE"),
      "MERGE INTO refusing t USING orders s ON t.partitionKey = s.partitionKey WHEN MATCHED THEN DELETE" ->
        Seq("UNRESOLVED_COLUMN"),
      s"CREATE TABLE partitioned USING `aws-kinesis` PARTITIONED BY (partitionKey) $options" ->
        Seq("not allowed to specify partitioning when the table schema is not defined"))
    for ((statement, words) <- refused) {
      val message = refusal(spark.sql(statement).collect())
      words.foreach(word => withClue(s"$statement: ")(message should include(word)))
    }
    refusal(spark.table("orders").select("data", "partitionKey").write.mode("overwrite").insertInto("refusing")) should
      include("cannot be overwritten")
    val complete = spark.readStream.table("orders").groupBy("partitionKey").count()
      .selectExpr("CAST(count AS STRING) AS data", "partitionKey").writeStream.outputMode("complete")
      .option("checkpointLocation", newCheckpointDir()).trigger(Trigger.AvailableNow()).toTable("refusing")
    refusal(complete.awaitTermination(120.seconds.toMillis)) should include("cannot be overwritten")
    Seq("with_columns", "copied", "partitioned").filter(spark.catalog.tableExists) shouldBe empty
    readBack(target)._1 shouldBe empty
  }

  test("Given a table, when it is dropped, then its stream and records stay") {
    createTable("dropped", readOptions(source))
    spark.sql("DROP TABLE dropped")
    TestStreams.readStream(source).size shouldBe puts.size
  }
}
