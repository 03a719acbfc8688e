"""SQL tables USING aws-kinesis through spark.sql (Spark 4): CREATE TABLE, INSERT INTO from another table and from
VALUES, and a batch SELECT that reads every row back once."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any, Callable

from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY


def table_options(stream: str, endpoint: str) -> str:
    options = {
        "kinesis.streamName": stream,
        "kinesis.region": REGION,
        "kinesis.endpointUrl": endpoint,
        "kinesis.verifyCertificate": "false",
        "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
        "kinesis.awsSecretKey": SECRET_KEY,
        "kinesis.startingPosition": "TRIM_HORIZON",
    }
    return ", ".join(f"'{key}' '{value}'" for key, value in options.items())


def test_given_two_tables_using_aws_kinesis_when_insert_into_copies_one_and_adds_values_then_select_reads_each_row_once(
    spark: Any, kinesis: Any, new_stream: Callable[[int], str], endpoint: str, tls_endpoint: str
) -> None:
    # Given a stream with 100 records, a second stream, and a table over each (the written one on the TLS port, which
    # the sink's producer needs)
    source, target = new_stream(2), new_stream(2)
    records = [(f"key-{i % 7}", f"sql-{i}") for i in range(100)]
    kinesis.put_records(StreamName=source, Records=[{"PartitionKey": k, "Data": v.encode()} for k, v in records])
    orders, copy = f"orders_{uuid.uuid4().hex[:8]}", f"copy_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {orders} USING `aws-kinesis` OPTIONS ({table_options(source, endpoint)})")
    spark.sql(f"CREATE TABLE {copy} USING `aws-kinesis` OPTIONS ({table_options(target, tls_endpoint)})")
    try:
        # When INSERT INTO copies the first table into the second, and adds a row from VALUES
        spark.sql(f"INSERT INTO {copy} SELECT data, partitionKey FROM {orders}")
        spark.sql(f"INSERT INTO {copy} (data, partitionKey) VALUES ('sql-extra', 'key-extra')")

        # Then a batch SELECT of the second table reads each row once
        rows = spark.sql(f"SELECT CAST(data AS STRING) AS data, partitionKey FROM {copy}").collect()
        assert Counter((r.partitionKey, r.data) for r in rows) == Counter(records + [("key-extra", "sql-extra")])
    finally:
        for table in (orders, copy):
            spark.sql(f"DROP TABLE IF EXISTS {table}")
