"""Reading from kinesis-mock through the JAR the package attached, with the typed options and the JSON helper."""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable

from conftest import eventually

from pyspark_kinesis import KinesisSourceOptions, data_as_text, parse_json_payload
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY


def test_given_json_records_in_a_stream_when_read_then_every_record_arrives_parsed(
    spark: Any, kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Any
) -> None:
    # Given a stream of two shards holding 60 JSON events
    stream = new_stream(2)
    sent = [{"eventType": ["click", "view", "buy"][i % 3], "amount": float(i)} for i in range(60)]
    kinesis.put_records(StreamName=stream, Records=[
        {"Data": json.dumps(e).encode(), "PartitionKey": f"user-{i % 7}"} for i, e in enumerate(sent)])

    # When the source reads it from TRIM_HORIZON into a memory table
    options = KinesisSourceOptions(
        stream_name=stream, region=REGION, endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY, starting_position="TRIM_HORIZON", get_records_fetch_interval_ms=50)
    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    rows = parse_json_payload(events.withColumn("text", data_as_text()), "eventType STRING, amount DOUBLE")
    table = f"events_{uuid.uuid4().hex[:8]}"
    query = (rows.writeStream.format("memory").queryName(table)
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(processingTime="500 milliseconds")
             .start())
    try:
        got = eventually(lambda: (lambda r: r if len(r) >= 60 else None)(spark.table(table).collect()), 120,
                         f"60 rows in {table} (query status: {query.status})")
    finally:
        query.stop()

    # Then every event arrives once, parsed, with its Kinesis metadata
    assert sorted((r.eventType, r.amount) for r in got) == sorted((e["eventType"], e["amount"]) for e in sent)
    assert {r.streamName for r in got} == {stream}
    assert len({r.shardId for r in got}) == 2
    assert all(r.partitionKey.startswith("user-") and r.sequenceNumber.isdigit() for r in got)
    assert all(json.loads(r.text)["amount"] == r.amount for r in got)
    assert "data" not in rows.columns
