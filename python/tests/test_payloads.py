"""The payload helpers on a batch DataFrame shaped like the source's rows."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

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
