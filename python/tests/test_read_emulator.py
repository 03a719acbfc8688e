"""Reading from kinesis-mock through the JAR the package attached, with the typed options and the JSON helper."""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable

from conftest import eventually, memory_rows

from pyspark_kinesis import KinesisSourceOptions, data_as_text, parse_json_payload
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY


def test_given_json_records_in_a_stream_when_read_then_every_record_arrives_parsed(
    spark: Any, kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Any
) -> None:
    # Given a stream of two shards holding 60 JSON events
    stream = new_stream(2)
    sent = [{"eventType": ["click", "view", "buy"][i % 3], "amount": float(i)} for i in range(60)]
    kinesis.put_records(
        StreamName=stream,
        Records=[{"Data": json.dumps(e).encode(), "PartitionKey": f"user-{i % 7}"} for i, e in enumerate(sent)],
    )

    # When the source reads it from TRIM_HORIZON into a memory table
    options = KinesisSourceOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        starting_position="TRIM_HORIZON",
        get_records_fetch_interval="50ms",
    )
    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    rows = parse_json_payload(events.withColumn("text", data_as_text()), "eventType STRING, amount DOUBLE")
    got = memory_rows(spark, rows, tmp_path / "checkpoint", 60)

    # Then every event arrives once, parsed, with its Kinesis metadata
    assert sorted((r.eventType, r.amount) for r in got) == sorted((e["eventType"], e["amount"]) for e in sent)
    assert {r.streamName for r in got} == {stream}
    assert len({r.shardId for r in got}) == 2
    assert all(r.partitionKey.startswith("user-") and r.sequenceNumber.isdigit() for r in got)
    assert all(json.loads(r.text)["amount"] == r.amount for r in got)
    assert "data" not in rows.columns


def test_given_enhanced_fan_out_when_read_then_every_record_arrives_once_and_the_consumer_goes_on_stop(
    spark: Any, kinesis: Any, tls_endpoint: str, new_stream: Callable[[int], str], tmp_path: Any
) -> None:
    # Given a stream of two shards holding 40 records
    stream = new_stream(2)
    kinesis.put_records(
        StreamName=stream, Records=[{"Data": f"r{i}".encode(), "PartitionKey": f"k-{i % 5}"} for i in range(40)]
    )

    # When the source reads it through a managed consumer (SubscribeToShard over the emulator's TLS port, whose
    # self-signed certificate only this test accepts)
    options = KinesisSourceOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=tls_endpoint,
        verify_certificate=False,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        starting_position="TRIM_HORIZON",
        consumer_type="EFO",
        consumer_name="py-efo",
    )
    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    table = f"efo_{uuid.uuid4().hex[:8]}"
    query = (
        events.withColumn("text", data_as_text())
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        got = eventually(
            lambda: (lambda r: r if len(r) >= 40 else None)(spark.table(table).collect()),
            120,
            f"40 rows in {table} (query status: {query.status})",
        )
        stream_arn = kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
        assert [c["ConsumerName"] for c in kinesis.list_stream_consumers(StreamARN=stream_arn)["Consumers"]] == [
            "py-efo"
        ]
    finally:
        query.stop()

    # Then every record arrives once, and the consumer the query registered is deregistered
    assert sorted(r.text for r in got) == sorted(f"r{i}" for i in range(40))
    left = [
        c for c in kinesis.list_stream_consumers(StreamARN=stream_arn)["Consumers"] if c["ConsumerStatus"] != "DELETING"
    ]
    assert left == []
