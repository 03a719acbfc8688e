"""The payload helpers on a batch DataFrame shaped like the source's rows."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from pyspark_kinesis import data_as_json, data_as_text, parse_json_payload


@pytest.fixture(scope="module")
def records(spark: Any) -> Any:
    rows = [
        (bytearray('{"eventType": "click", "amount": 1.5, "shardId": "payload-field"}'.encode()), "k1", "shard-0"),
        (bytearray("caf\u00e9 not json".encode()), "k2", "shard-1"),
    ]
    return spark.createDataFrame(rows, "data BINARY, partitionKey STRING, shardId STRING")


def test_given_utf8_payloads_when_read_as_text_then_the_text_is_decoded(records: Any) -> None:
    texts = [r.text for r in records.select(data_as_text().alias("text")).collect()]
    assert texts[1] == "caf\u00e9 not json"
    assert texts[0].startswith('{"eventType": "click"')


def test_given_a_schema_when_read_as_json_then_fields_are_parsed_and_non_json_gives_nulls(records: Any) -> None:
    schema = StructType([StructField("eventType", StringType()), StructField("amount", DoubleType())])
    for given in (schema, "eventType STRING, amount DOUBLE"):
        events = [r.e for r in records.select(data_as_json(given).alias("e")).collect()]
        assert (events[0].eventType, events[0].amount) == ("click", 1.5)
        assert events[1] is None or events[1].eventType is None


def test_given_a_payload_schema_when_parsed_then_fields_come_first_and_metadata_follows(records: Any) -> None:
    parsed = parse_json_payload(records, "eventType STRING, amount DOUBLE, shardId STRING")
    # The payload's shardId wins; the source's column of the same name is left out rather than duplicated.
    assert parsed.columns == ["eventType", "amount", "shardId", "partitionKey"]
    first = parsed.collect()[0]
    assert (first.eventType, first.amount, first.shardId, first.partitionKey) == ("click", 1.5, "payload-field", "k1")


def test_given_wrong_arguments_then_type_errors_say_what_is_expected() -> None:
    with pytest.raises(TypeError, match="column must be a column name or a pyspark Column"):
        data_as_text(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schema must be a StructType, an ArrayType or a DDL string"):
        data_as_json({"eventType": "string"})  # type: ignore[arg-type]


# ---- CloudWatch Logs, DynamoDB change records, compressed payloads: the JVM's functions, end to end ----

_DATA_MESSAGE = {
    "messageType": "DATA_MESSAGE",
    "owner": "111122223333",
    "logGroup": "/aws/lambda/checkout",
    "logStream": "2026/11/27/[$LATEST]abc",
    "subscriptionFilters": ["to-kinesis"],
    "logEvents": [
        {"id": "1", "timestamp": 1764201600123, "message": "START"},
        {"id": "2", "timestamp": 1764201600456, "message": "END"},
    ],
}
_CONTROL_MESSAGE = {
    "messageType": "CONTROL_MESSAGE",
    "owner": "CloudwatchLogs",
    "logGroup": "",
    "logStream": "",
    "subscriptionFilters": [],
    "logEvents": [{"id": "", "timestamp": 1764201600000, "message": "CWL CONTROL MESSAGE: Checking health"}],
}


def _change(event_name: str, image_key: str, qty: str, micros: int) -> bytes:
    import json

    return json.dumps(
        {
            "awsRegion": "eu-west-3",
            "dynamodb": {
                "ApproximateCreationDateTime": micros,
                "Keys": {"pk": {"S": "order#1"}},
                image_key: {"pk": {"S": "order#1"}, "qty": {"N": qty}},
                "SizeBytes": 40,
                "ApproximateCreationDateTimePrecision": "MICROSECOND",
            },
            "eventID": f"e-{event_name}",
            "eventName": event_name,
            "userIdentity": None,
            "recordFormat": "application/json",
            "tableName": "Orders",
            "eventSource": "aws:dynamodb",
        }
    ).encode()


def test_given_aws_formats_in_a_stream_when_read_and_decoded_then_each_function_gives_its_rows(
    spark: Any, kinesis: Any, endpoint: str, new_stream: Any, tmp_path: Any
) -> None:
    import gzip
    import json
    import uuid
    import zlib

    from conftest import eventually
    from pyspark.sql.functions import col, explode
    from test_streams_and_batch_reads import options as source_options

    from pyspark_kinesis.payloads import cloudwatch_logs, decompress, dynamodb_change

    # Given a stream holding CloudWatch Logs subscription records (a data and a control message, gzip-compressed as
    # subscriptions write them), DynamoDB change records and a zlib-compressed payload, told apart by partition key
    stream = new_stream(1)
    sent = [
        (gzip.compress(json.dumps(_DATA_MESSAGE).encode()), "logs"),
        (gzip.compress(json.dumps(_CONTROL_MESSAGE).encode()), "logs"),
        (_change("INSERT", "NewImage", "3", 1764201600123456), "ddb"),
        (_change("REMOVE", "OldImage", "3", 1764201600999999), "ddb"),
        (zlib.compress(b'{"event":"click"}'), "zlib"),
    ]
    kinesis.put_records(StreamName=stream, Records=[{"Data": d, "PartitionKey": k} for d, k in sent])

    # When a query reads the stream and decodes every record with each function
    options = source_options(endpoint, stream, starting_position="TRIM_HORIZON", get_records_fetch_interval="50ms")
    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    decoded = events.select(
        "partitionKey",
        cloudwatch_logs("data").alias("logs"),
        dynamodb_change("data", StructType([StructField("pk", StringType()), StructField("qty", LongType())])).alias(
            "c"
        ),
        decompress("data", "zlib").cast("string").alias("text"),
    )
    table = f"payloads_{uuid.uuid4().hex[:8]}"
    query = (
        decoded.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        eventually(lambda: spark.table(table).count() >= len(sent), 120, f"{len(sent)} rows in {table}")
    finally:
        query.stop()
    rows = spark.table(table)

    # Then the log events of the data message come one per row once control messages are filtered out
    logs = rows.where("partitionKey = 'logs'")
    assert sorted(r.messageType for r in logs.select("logs.messageType").collect()) == [
        "CONTROL_MESSAGE",
        "DATA_MESSAGE",
    ]
    log_events = (
        logs.where("logs.messageType = 'DATA_MESSAGE'")
        .select("logs.logGroup", explode("logs.logEvents").alias("event"))
        .select("logGroup", "event.id", "event.message", col("event.timestamp").cast("double").alias("seconds"))
        .collect()
    )
    assert sorted((r.logGroup, r.id, r.message, r.seconds) for r in log_events) == [
        ("/aws/lambda/checkout", "1", "START", 1764201600.123),
        ("/aws/lambda/checkout", "2", "END", 1764201600.456),
    ]
    # the change records with their images typed and their microsecond creation times; REMOVE has no new image
    changes = {
        r.eventName: r
        for r in rows.where("partitionKey = 'ddb'")
        .select("c.*", col("c.approximateCreationDateTime").cast("decimal(20,6)").alias("seconds"))
        .collect()
    }
    assert changes["INSERT"].newImage.qty == 3 and changes["INSERT"].oldImage is None
    assert changes["REMOVE"].newImage is None and changes["REMOVE"].oldImage.qty == 3
    assert str(changes["REMOVE"].seconds) == "1764201600.999999"
    assert all(c.error is None and c.tableName == "Orders" for c in changes.values())
    # and the compressed payload decompressed; the other records are not zlib, so PERMISSIVE gives null for them
    texts = {(r.partitionKey, r.text) for r in rows.select("partitionKey", "text").collect()}
    assert ("zlib", '{"event":"click"}') in texts
    assert {t for k, t in texts if k != "zlib"} == {None}


def test_given_a_malformed_record_when_decoded_failfast_then_the_job_fails_with_the_reason(records: Any) -> None:
    from pyspark_kinesis.payloads import cloudwatch_logs, dynamodb_change

    logs = records.select(cloudwatch_logs("data").alias("logs"))
    permissive = logs.select("logs.error", "logs.messageType").collect()
    assert permissive[1].error == "the record is neither gzip-compressed (it starts with bytes 63 61 66 c3) nor JSON"
    assert permissive[1].messageType is None
    with pytest.raises(Exception, match=r"cloudwatch_logs: .* The record was not decoded \(mode FAILFAST\)"):
        records.select(cloudwatch_logs("data", mode="FAILFAST")).collect()
    with pytest.raises(TypeError, match="item_schema must be a StructType or a DDL string"):
        dynamodb_change("data", 42)  # type: ignore[arg-type]
