"""The AWS Glue Schema Registry functions from PySpark, through the JVM's: records of all three data formats (Avro,
JSON Schema, Protobuf) framed by ``to_glue_schema_registry`` (registering each schema's version), put into
kinesis-mock, read by one streaming query and decoded by ``from_glue_schema_registry`` against moto's registry."""

from __future__ import annotations

import uuid
from typing import Any, Callable

import pytest
from conftest import memory_rows
from pyspark.sql.functions import coalesce, col, struct, substring_index, when

from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY
from pyspark_kinesis.payloads import from_glue_schema_registry, to_glue_schema_registry

JSON_SCHEMA = '{"type": "object", "properties": {"id": {"type": "string"}, "amount": {"type": "integer"}}}'
PROTO_SCHEMA = 'syntax = "proto3";\npackage shop;\nmessage Order { string id = 1; int64 amount = 2; }'
# Each format's schema name and writer option (Avro's schema is derived from the struct).
FORMATS = {
    "avro": ("orders", {}),
    "json": ("orders-json", {"jsonSchema": JSON_SCHEMA}),
    "proto": ("orders-proto", {"protobufSchema": PROTO_SCHEMA}),
}


def test_given_framed_records_of_every_format_in_a_stream_when_read_and_decoded_then_every_record_arrives_once(
    spark: Any, kinesis: Any, moto: str, endpoint: str, new_stream: Callable[[int], str], tmp_path: Any
) -> None:
    import boto3

    # Given a registry at moto, and 30 orders, each framed in one of the three formats (its version registered with
    # auto_register)
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
    formats = list(FORMATS)
    orders = spark.createDataFrame(
        [(f"{formats[i % 3]}-o-{i}", f"o-{i}", i) for i in range(30)], "key STRING, id STRING, amount BIGINT"
    )
    with pytest.raises(Exception, match="auto_register"):
        orders.select(to_glue_schema_registry(struct("id", "amount"), registry, "orders", options)).collect()
    framed = []
    for name, (schema, writer) in FORMATS.items():
        framed += (
            orders.where(col("key").startswith(name))
            .select(
                col("key"),
                to_glue_schema_registry(
                    struct("id", "amount"),
                    registry,
                    schema,
                    {**options, **writer, "auto_register": True, "compression": "zlib"},
                ).alias("data"),
            )
            .collect()
        )
    stream = new_stream(2)
    kinesis.put_records(StreamName=stream, Records=[{"Data": bytes(r.data), "PartitionKey": r.key} for r in framed])

    # When one streaming query reads the stream and decodes each record with its format's schema (FAILFAST: a
    # record given to another format's decoder would fail the query)
    position = {
        "kinesis.streamName": stream,
        "kinesis.endpointUrl": endpoint,
        "kinesis.startingPosition": "TRIM_HORIZON",
    }
    events = spark.readStream.format("aws-kinesis").options(**options, **position).load()
    record = struct("data", "shardId", "sequenceNumber")
    decoded = events.select(
        col("partitionKey"),
        *[
            when(
                col("partitionKey").startswith(name),
                from_glue_schema_registry(record, registry, schema, {**options, "mode": "FAILFAST"}),
            ).alias(name)
            for name, (schema, _) in FORMATS.items()
        ],
    ).select(
        substring_index("partitionKey", "-", 1).alias("format"),
        coalesce(*[col(f"{name}.id") for name in formats]).alias("id"),
        coalesce(*[col(f"{name}.amount") for name in formats]).alias("amount"),
    )
    got = memory_rows(spark, decoded, tmp_path / "checkpoint", 30)

    # Then every order arrives once, in its format, with the fields it was written with
    assert sorted((r.format, r.id, r.amount) for r in got) == sorted((formats[i % 3], f"o-{i}", i) for i in range(30))
