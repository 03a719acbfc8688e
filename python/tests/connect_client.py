"""A Spark Connect client, run by test_spark_connect.py in a process of its own: a Connect session sets
SPARK_CONNECT_MODE_ENABLED for its whole process, which would turn the other tests' classic session into a client.

    python connect_client.py '<json>'

The JSON names the server (``remote``: "local[2]" or "sc://..."), how the connector reaches it (``how``: "configure"
through configure_spark_with_kinesis, "attach" through attach_kinesis, "server" when the server has it already), the
emulator's endpoints and the credentials, the streams, the rows to write and a folder for checkpoints. The client reads
``source`` with a streaming query, copies it to ``copy`` with another, writes ``rows`` to ``batch`` in a batch, reads
``copy`` and ``batch`` back in batches, and prints what it read and the read query's progress metrics as JSON, last;
with ``payloads``, it also decodes them with each payload function, and it says why those cannot be called, if so.
"""

from __future__ import annotations

import base64
import json
import sys
import uuid
from typing import Any, Dict, List

from pyspark.sql import SparkSession

from pyspark_kinesis import KinesisSinkOptions, KinesisSourceOptions, attach_kinesis, configure_spark_with_kinesis

TIMEOUT_S = 120


def source_options(args: Dict[str, Any], stream: str) -> Dict[str, str]:
    return KinesisSourceOptions(
        stream_name=stream,
        region=args["region"],
        endpoint_url=args["endpoint"],
        aws_access_key_id=args["key"],
        aws_secret_key=args["secret"],
        starting_position="TRIM_HORIZON",
    ).as_options()


def sink_options(args: Dict[str, Any], stream: str) -> Dict[str, str]:
    return KinesisSinkOptions(
        stream_name=stream,
        region=args["region"],
        endpoint_url=args["tls_endpoint"],
        verify_certificate=False,
        aws_access_key_id=args["key"],
        aws_secret_key=args["secret"],
    ).as_options()


def session(args: Dict[str, Any]) -> SparkSession:
    builder = SparkSession.builder.remote(args["remote"])
    if args["how"] == "configure":
        builder = configure_spark_with_kinesis(
            builder.config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
        )
    spark = builder.getOrCreate()
    if args["how"] == "attach":
        attach_kinesis(attach_kinesis(spark))  # the second call finds the session attached and does nothing
    return spark


def rows(frame: Any) -> List[List[str]]:
    return [
        [r.partitionKey, r.data] for r in frame.selectExpr("partitionKey", "CAST(data AS STRING) AS data").collect()
    ]


def run_available_now(query: Any, what: str) -> Any:
    if not query.awaitTermination(TIMEOUT_S):
        query.stop()
        raise TimeoutError(f"{what} did not end within {TIMEOUT_S} s")
    return query


def decode_payloads(spark: SparkSession, given: Dict[str, Any]) -> Dict[str, Any]:
    """Calls each payload function through Spark Connect, from Python and in SQL: CloudWatch Logs, DynamoDB and gzip
    payloads (base64 in ``given``), and orders framed for, then decoded from, the Glue Schema Registry at moto."""
    from pyspark.sql.functions import explode, struct

    from pyspark_kinesis.payloads import (
        cloudwatch_logs,
        decompress,
        dynamodb_change,
        from_glue_schema_registry,
        to_glue_schema_registry,
    )

    payloads = spark.createDataFrame(
        [(base64.b64decode(given["logs"]), base64.b64decode(given["change"]))], "logs BINARY, change BINARY"
    )
    payloads.createOrReplaceTempView("payloads")
    change = (
        payloads.select(dynamodb_change("change", "pk STRING, qty INT", "FAILFAST").alias("c"))
        .select("c.eventName", "c.newImage.pk", "c.newImage.qty")
        .first()
    )
    registry, options = given["registry"], given["glue_options"]
    orders = spark.createDataFrame([(f"o-{i}", i) for i in range(5)], "id STRING, amount BIGINT")
    # Written first: the reader schema is the latest version, which the writing registers.
    written = orders.select(
        to_glue_schema_registry(
            struct("id", "amount"), registry, "orders", {**options, "auto_register": True, "compression": "zlib"}
        ).alias("data")
    ).collect()
    framed = spark.createDataFrame([(bytes(r.data),) for r in written], "data BINARY")
    decoded = framed.select(
        from_glue_schema_registry("data", registry, "orders", {**options, "mode": "FAILFAST"}).alias("o")
    ).select("o.*")
    sql_options = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
    framed.createOrReplaceTempView("framed")
    return {
        "log_events": [
            r.message
            for r in payloads.select(explode(cloudwatch_logs("logs").logEvents.message)).toDF("message").collect()
        ],
        "change": list(change),
        "decompressed": payloads.select(decompress("logs", "gzip").cast("string")).first()[0],
        "orders": sorted([r.id, r.amount] for r in decoded.collect()),
        "sql_log_events": [
            r[0] for r in spark.sql("SELECT explode(cloudwatch_logs(logs).logEvents.message) FROM payloads").collect()
        ],
        "sql_orders": sorted(
            r[0]
            for r in spark.sql(
                f"SELECT from_glue_schema_registry(data, '{registry}', 'orders', map({sql_options})).id FROM framed"
            ).collect()
        ),
    }


def payload_function_error(spark: SparkSession) -> str:
    """Why a payload function cannot be called on this session's server, or "" when it can."""
    from pyspark_kinesis.payloads import cloudwatch_logs

    try:
        decoded = spark.range(1).selectExpr("CAST('x' AS BINARY) AS data").select(cloudwatch_logs("data").alias("l"))
    except RuntimeError as error:
        return str(error)
    return "" if decoded.schema.fieldNames() == ["l"] else f"resolved to {decoded.schema}"


def main(args: Dict[str, Any]) -> Dict[str, Any]:
    spark = session(args)
    checkpoints, table = args["checkpoints"], f"read_{uuid.uuid4().hex[:8]}"
    result: Dict[str, Any] = {"payload_function_error": payload_function_error(spark)}
    if args.get("payloads"):
        result["payloads"] = decode_payloads(spark, args["payloads"])
    if args.get("source"):
        read = run_available_now(
            spark.readStream.format("aws-kinesis")
            .options(**source_options(args, args["source"]))
            .load()
            .writeStream.format("memory")
            .queryName(table)
            .option("checkpointLocation", f"{checkpoints}/read")
            .trigger(availableNow=True)
            .start(),
            "the streaming read",
        )
        result["stream_read"] = rows(spark.table(table))
        result["progress_metrics"] = [dict(p["sources"][0]["metrics"]) for p in read.recentProgress]
        run_available_now(
            spark.readStream.format("aws-kinesis")
            .options(**source_options(args, args["source"]))
            .load()
            .select("data", "partitionKey")
            .writeStream.format("aws-kinesis")
            .options(**sink_options(args, args["copy"]))
            .option("checkpointLocation", f"{checkpoints}/copy")
            .trigger(availableNow=True)
            .start(),
            "the streaming write",
        )
        result["copy_read"] = rows(
            spark.read.format("aws-kinesis").options(**source_options(args, args["copy"])).load()
        )
    if not args.get("batch"):
        spark.stop()
        return result
    written = spark.createDataFrame(args["rows"], "partitionKey string, data string")
    written.write.format("aws-kinesis").options(**sink_options(args, args["batch"])).mode("append").save()
    result["batch_read"] = rows(spark.read.format("aws-kinesis").options(**source_options(args, args["batch"])).load())
    spark.stop()
    return result


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
