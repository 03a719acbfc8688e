"""Spark Declarative Pipelines (``spark-pipelines``, pyspark 4.1 and later) running the example pipeline
(docs/examples/pipelines: a Kinesis streaming table, a SQL streaming table after it, a copy to a second stream through
a Kinesis sink) again and again on a persistent catalog, against kinesis-mock.

One project per store and consumer type: polling with the Hadoop store (the example as shipped), and enhanced
fan-out with the DynamoDB store. Each run must hold every record exactly once (by its identity, ``(streamName,
shardId, sequenceNumber, subSequenceNumber)``, and by its payload), reading on where the last run stopped; a full
refresh rebuilds the tables from kinesis.startingPosition, and no fan-out consumer the connector registered is left
behind.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from conftest import emulator_script
from pipeline_project import PipelineProject
from test_streams_and_batch_reads import options as source_options

pyspark = pytest.importorskip("pyspark")
if tuple(int(p) for p in pyspark.__version__.split(".")[:2]) < (4, 1):
    pytest.skip(f"pyspark {pyspark.__version__} has no spark-pipelines (Spark 4.1 added it)", allow_module_level=True)

IDENTITY = ["streamName", "shardId", "sequenceNumber", "subSequenceNumber"]
CONSUMER = "orders-pipeline"


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[str]:
    """DynamoDB Local: the one bin/test started (DYNAMODB_LOCAL_ENDPOINT), or one started here by its script."""
    yield from emulator_script("DYNAMODB_LOCAL_ENDPOINT", "dynamodb-local.sh")


def put(kinesis: Any, stream: str, prefix: str, n: int) -> List[Tuple[str, str]]:
    """Puts ``n`` records with unique payloads over 7 partition keys; returns their (partitionKey, payload)."""
    records = [(f"k{i % 7}", f"{prefix}-{i}") for i in range(n)]
    answer = kinesis.put_records(
        StreamName=stream, Records=[{"PartitionKey": k, "Data": d.encode()} for k, d in records]
    )
    assert answer.get("FailedRecordCount", 0) == 0, answer
    return records


def assert_table_exactly(spark: Any, project: PipelineProject, table: str, written: List[Tuple[str, str]]) -> None:
    """The table holds each written record once: one row per record identity, and the payloads as written."""
    rows = spark.read.parquet(str(project.table(table))).collect()
    identities = Counter(tuple(getattr(r, c) for c in IDENTITY) for r in rows)
    repeated = {k: n for k, n in identities.items() if n > 1}
    assert not repeated, f"{table}: records held more than once: {repeated}"
    text = (lambda r: r.text) if table == "order_ids" else (lambda r: bytes(r.data).decode())
    got, expected = Counter(text(r) for r in rows), Counter(d for _, d in written)
    assert got == expected, (
        f"{table}: {len(rows)} rows for {len(written)} records; extra: {dict(got - expected)}, "
        f"missing: {dict(expected - got)}"
    )


def copied(spark: Any, endpoint: str, stream: str) -> "Counter[Tuple[str, str]]":
    """Every (partitionKey, payload) the sink wrote to ``stream``, read back by a batch read to the tip."""
    options = source_options(endpoint, stream, starting_position="TRIM_HORIZON").as_options()
    rows = spark.read.format("aws-kinesis").options(**options).load().collect()
    return Counter((r.partitionKey, bytes(r.data).decode()) for r in rows)


def consumers(kinesis: Any, stream: str) -> List[Tuple[str, str]]:
    """The stream's consumers not being deleted, as (name, ARN)."""
    arn = kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    listed = kinesis.list_stream_consumers(StreamARN=arn)["Consumers"]
    return sorted((c["ConsumerName"], c["ConsumerARN"]) for c in listed if c["ConsumerStatus"] != "DELETING")


def sink_options(tls_endpoint: str, copy: str) -> Dict[str, str]:
    """The sink writes through the emulator's TLS port, as the Kinesis Producer Library must."""
    return {"kinesis.streamName": copy, "kinesis.endpointUrl": tls_endpoint, "kinesis.verifyCertificate": "false"}


def test_given_the_example_pipeline_polling_with_the_hadoop_store_when_run_again_and_refreshed_then_each_run_is_exact(
    spark: Any, kinesis: Any, endpoint: str, tls_endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given the example pipeline as shipped (polling, the Hadoop store) on a stream of two shards with records
    source, copy = new_stream(2), new_stream(1)
    project = PipelineProject(
        tmp_path / "pipeline",
        {"kinesis.streamName": source, "kinesis.endpointUrl": endpoint},
        sink_options(tls_endpoint, copy),
    )
    written = put(kinesis, source, "first", 120)

    # When it runs, records are put, and it runs again
    project.run()
    written += put(kinesis, source, "second", 80)
    project.run()

    # Then each table holds every record once, and the copy every record once, under its partition key
    assert_table_exactly(spark, project, "orders", written)
    assert_table_exactly(spark, project, "order_ids", written)
    assert copied(spark, endpoint, copy) == Counter(written)

    # When more records are put and the whole pipeline is refreshed
    third = put(kinesis, source, "third", 40)
    project.run("--full-refresh-all")

    # Then every table was rebuilt from kinesis.startingPosition (TRIM_HORIZON), each record once
    assert_table_exactly(spark, project, "orders", written + third)
    assert_table_exactly(spark, project, "order_ids", written + third)
    # and the sink, which a refresh cannot take back, got every record of the rebuilt table once more
    assert copied(spark, endpoint, copy) == Counter(written + written + third)


def test_given_the_example_pipeline_on_fan_out_with_the_dynamodb_store_when_run_again_and_its_table_refreshed_then_each_run_is_exact_and_no_consumer_is_left(  # noqa: E501
    spark: Any,
    kinesis: Any,
    endpoint: str,
    tls_endpoint: str,
    dynamodb: str,
    new_stream: Callable[[int], str],
    tmp_path: Path,
) -> None:
    # Given the example pipeline reading through enhanced fan-out, with the DynamoDB store, a stream with records
    source, copy = new_stream(2), new_stream(1)
    fan_out_dynamodb = {
        "kinesis.streamName": source,
        "kinesis.endpointUrl": tls_endpoint,
        "kinesis.verifyCertificate": "false",
        "kinesis.consumerType": "SubscribeToShard",
        # Registered by each run and deregistered at its end (kinesis.deregisterConsumerOnStop's default). Kept
        # between runs instead, it would serve the next run on AWS; kinesis-mock though counts a subscription of a
        # run that ended open for the rest of its 5 minutes and refuses the next run's until then.
        "kinesis.consumerName": CONSUMER,
        "kinesis.metadataCommitterType": "DYNAMODB",
        "kinesis.dynamodb.tableName": f"pipelines-{uuid.uuid4().hex[:8]}",
        "kinesis.dynamodb.endpointUrl": dynamodb,
    }
    project = PipelineProject(tmp_path / "pipeline", fan_out_dynamodb, sink_options(tls_endpoint, copy))
    written = put(kinesis, source, "first", 120)

    # When it runs, records are put, and it runs again
    project.run()
    after_first = consumers(kinesis, source)
    written += put(kinesis, source, "second", 80)
    project.run()

    # Then each table holds every record once, and the copy every record once, under its partition key
    assert_table_exactly(spark, project, "orders", written)
    assert_table_exactly(spark, project, "order_ids", written)
    assert copied(spark, endpoint, copy) == Counter(written)
    # and each run read through a consumer it registered and deregistered at its end: none left behind
    assert after_first == [] and consumers(kinesis, source) == []
    assert all("Registered stream consumer" in project.log(run) for run in (1, 2)), "a run read without fan-out"

    # When more records are put and the orders table alone is refreshed (a new checkpoint for its flow)
    written += put(kinesis, source, "third", 40)
    project.run("--full-refresh", "orders")

    # Then the table was rebuilt from kinesis.startingPosition, each record once
    assert_table_exactly(spark, project, "orders", written)
    # and the new checkpoint's consumer went at the run's end too: none left behind
    assert "Registered stream consumer" in project.log(3) and consumers(kinesis, source) == []
