"""Writing to kinesis-mock through the sink from PySpark, batch and streaming, and reading the rows back through
the source. The sink's Kinesis Producer Library speaks HTTPS only, so it writes to the emulator's TLS port; with
``producer="PutRecords"`` the sink writes to its plain HTTP port."""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable, List, Tuple

import pytest
from conftest import eventually

from pyspark_kinesis import KinesisSinkOptions, KinesisSourceOptions
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY


def sink_options(stream: str, tls_endpoint: str, **more: Any) -> KinesisSinkOptions:
    return KinesisSinkOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=tls_endpoint,
        verify_certificate=False,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        **more,
    )


def process_all_available(query: Any, timeout: float) -> None:
    """``query.processAllAvailable()``, bounded: it fails the test instead of waiting forever."""
    done = threading.Event()
    failures = []

    def run() -> None:
        try:
            query.processAllAvailable()
        except Exception as e:  # reported below, in the test's thread
            failures.append(e)
        finally:
            done.set()

    threading.Thread(target=run, name="process-all-available", daemon=True).start()
    if not done.wait(timeout):
        pytest.fail(
            f"the reading query did not process all available records within {timeout} s (status: {query.status})"
        )
    if failures:
        raise failures[0]


def read_back(spark: Any, stream: str, endpoint: str, expected: int, checkpoint: Path) -> "Counter[Tuple[str, str]]":
    """Every (partitionKey, data) in the stream, read by the connector's source from TRIM_HORIZON: waits for
    ``expected`` rows, then until the query has read everything the stream holds, so an extra row shows too."""
    options = KinesisSourceOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        starting_position="TRIM_HORIZON",
        get_records_fetch_interval="50ms",
    )
    table = f"written_{uuid.uuid4().hex[:8]}"
    query = (
        spark.readStream.format("aws-kinesis")
        .options(**options.as_options())
        .load()
        .selectExpr("partitionKey", "CAST(data AS STRING) AS data")
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        eventually(
            lambda: spark.table(table).count() >= expected,
            120,
            f"{expected} rows read back from {stream} (query status: {query.status})",
        )
        process_all_available(query, 120)
        rows = spark.table(table).collect()
    finally:
        query.stop()
    return Counter((r.partitionKey, r.data) for r in rows)


def assert_exactly(got: "Counter[Tuple[str, str]]", written: List[Tuple[str, str]]) -> None:
    expected = Counter(written)
    assert got == expected, (
        f"{sum(got.values())} rows read back for {len(written)} written; extra: {dict(got - expected)}, "
        f"missing: {dict(expected - got)}"
    )


def test_given_rows_when_written_in_a_batch_then_the_source_reads_back_exactly_those_rows(
    spark: Any, endpoint: str, tls_endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given a stream of two shards and 3000 rows with binary payloads over 37 partition keys, in 3 partitions
    stream = new_stream(2)
    written = [(f"key-{i % 37}", f"batch-{i}") for i in range(3000)]
    rows = (
        spark.createDataFrame(written, "partitionKey string, text string")
        .repartition(3)
        .selectExpr("partitionKey", "CAST(text AS BINARY) AS data")
    )

    # When they are written in one batch, aggregated by the producer
    rows.write.format("aws-kinesis").options(**sink_options(stream, tls_endpoint).as_options()).mode("append").save()

    # Then the source reads back every row once, with its partition key
    got = read_back(spark, stream, endpoint, len(written), tmp_path / "read")
    assert_exactly(got, written)


def test_given_the_put_records_producer_when_rows_are_written_over_plain_http_then_the_source_reads_back_each_once(
    spark: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given a stream of two shards and 2000 rows over 31 partition keys, in 2 partitions
    stream = new_stream(2)
    written = [(f"key-{i % 31}", f"put-records-{i}") for i in range(2000)]
    rows = spark.createDataFrame(written, "partitionKey string, data string").repartition(2)

    # When they are written with the connector's own PutRecords calls to the emulator's plain HTTP port
    options = sink_options(stream, endpoint, producer="PutRecords")
    rows.write.format("aws-kinesis").options(**options.as_options()).mode("append").save()

    # Then the source reads back every row once, with its partition key
    got = read_back(spark, stream, endpoint, len(written), tmp_path / "read")
    assert_exactly(got, written)


def test_given_a_stream_of_files_when_written_by_a_streaming_query_then_the_source_reads_back_exactly_those_rows(
    spark: Any, endpoint: str, tls_endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given 4 files of 500 JSON rows each, read as a stream one file per micro-batch
    stream = new_stream(2)
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    written = []
    for f in range(4):
        lines = [(f"key-{i % 23}", f"stream-{f}-{i}") for i in range(500)]
        written += lines
        (incoming / f"part-{f}.json").write_text(
            "".join(json.dumps({"partitionKey": k, "data": d}) + "\n" for k, d in lines)
        )
    rows = (
        spark.readStream.schema("partitionKey STRING, data STRING").option("maxFilesPerTrigger", 1).json(str(incoming))
    )

    # When a streaming query writes them to Kinesis, one record per row (no aggregation), until all are written
    options = sink_options(stream, tls_endpoint, aggregation_enabled=False, record_ttl=120000)
    query = (
        rows.writeStream.format("aws-kinesis")
        .options(**options.as_options())
        .option("checkpointLocation", str(tmp_path / "write"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        finished = query.awaitTermination(300)
    finally:
        query.stop()
    assert finished, f"the writing query did not finish within 300 s (status: {query.status})"
    assert query.exception() is None
    assert sum(p["numInputRows"] for p in query.recentProgress) == len(written)
    assert len([p for p in query.recentProgress if p["numInputRows"] > 0]) == 4

    # Then the source reads back every row once, with its partition key
    got = read_back(spark, stream, endpoint, len(written), tmp_path / "read")
    assert_exactly(got, written)
