"""The AWS Glue Schema Registry functions from PySpark, through the JVM's: records framed by
``to_glue_schema_registry`` (registering the schema's version), put into kinesis-mock, read by a streaming query and
decoded by ``from_glue_schema_registry`` against moto's registry."""

from __future__ import annotations

import uuid
from typing import Any, Callable

import pytest
from conftest import memory_rows
from pyspark.sql.functions import col, struct

from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY
from pyspark_kinesis.payloads import from_glue_schema_registry, to_glue_schema_registry


def test_given_framed_records_in_a_stream_when_read_and_decoded_then_every_record_arrives_once(
    spark: Any, kinesis: Any, moto: str, endpoint: str, new_stream: Callable[[int], str], tmp_path: Any
) -> None:
    import boto3

    # Given a registry at moto, and 30 orders framed for it (the version registered with auto_register)
    registry = f"py-{uuid.uuid4().hex[:8]}"
    glue = boto3.client(
        "glue", endpoint_url=moto, region_name=REGION, aws_access_key_id="test", aws_secret_access_key="test"
    )
    glue.create_registry(RegistryName=registry)
    options = {
        "kinesis.region": REGION,
        "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
        "kinesis.awsSecretKey": SECRET_KEY,
        "kinesis.glue.endpointUrl": moto,
    }
    orders = spark.createDataFrame([(f"o-{i}", i) for i in range(30)], "id STRING, amount BIGINT")
    with pytest.raises(Exception, match="auto_register"):
        orders.select(to_glue_schema_registry(struct("id", "amount"), registry, "orders", options)).collect()
    framed = orders.select(
        col("id"),
        to_glue_schema_registry(
            struct("id", "amount"), registry, "orders", {**options, "auto_register": True, "compression": "zlib"}
        ).alias("data"),
    ).collect()
    stream = new_stream(2)
    kinesis.put_records(StreamName=stream, Records=[{"Data": bytes(r.data), "PartitionKey": r.id} for r in framed])

    # When a streaming query reads the stream and decodes the records
    position = {
        "kinesis.streamName": stream,
        "kinesis.endpointUrl": endpoint,
        "kinesis.startingPosition": "TRIM_HORIZON",
    }
    events = spark.readStream.format("aws-kinesis").options(**options, **position).load()
    decoded = events.select(
        from_glue_schema_registry(
            struct("data", "shardId", "sequenceNumber"), registry, "orders", {**options, "mode": "FAILFAST"}
        ).alias("o")
    ).select("o.*")
    got = memory_rows(spark, decoded, tmp_path / "checkpoint", 30)

    # Then every order arrives once, with the fields it was written with
    assert sorted((r.id, r.amount) for r in got) == sorted((f"o-{i}", i) for i in range(30))
