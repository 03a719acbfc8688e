"""Several streams in one query and bounded batch reads (spark.read), from PySpark against kinesis-mock, with the
option builders' keyword arguments."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable, List, Tuple

from pyspark_kinesis import KinesisSourceOptions
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY


def put(kinesis: Any, stream: str, prefix: str, n: int) -> List[Tuple[str, str]]:
    records = [{"PartitionKey": f"k{i % 7}", "Data": f"{prefix}-{i}".encode()} for i in range(n)]
    answer = kinesis.put_records(StreamName=stream, Records=records)
    assert answer.get("FailedRecordCount", 0) == 0, answer
    return [(stream, f"{prefix}-{i}") for i in range(n)]


def options(endpoint: str, stream_name: str, **more: Any) -> KinesisSourceOptions:
    return KinesisSourceOptions(
        stream_name=stream_name,
        region=REGION,
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        **more,
    )


def test_given_two_streams_when_read_by_one_available_now_query_then_each_record_comes_once_with_its_stream(
    spark: Any, kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given two streams with records in each
    orders, clicks = new_stream(2), new_stream(1)
    written = put(kinesis, orders, "o", 40) + put(kinesis, clicks, "c", 25)
    # When one Trigger.AvailableNow query reads both, a few shards per task
    table = f"streams_{uuid.uuid4().hex[:8]}"
    source = options(endpoint, f"{orders},{clicks}", starting_position="TRIM_HORIZON", shards_per_task=2)
    query = (
        spark.readStream.format("aws-kinesis")
        .options(**source.as_options())
        .load()
        .selectExpr("streamName", "CAST(data AS STRING) AS data")
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180), "the AvailableNow run did not end within 180 s"
    # Then every record came once, tagged with its stream, and each stream reports its own metrics
    got = Counter((r.streamName, r.data) for r in spark.table(table).collect())
    assert got == Counter(written), f"extra: {dict(got - Counter(written))}, missing: {dict(Counter(written) - got)}"
    read = [p["sources"][0]["metrics"] for p in query.recentProgress if p["numInputRows"] > 0]
    assert sum(int(m.get(f"stream.{orders}.recordsRead", "0")) for m in read) == 40
    assert sum(int(m.get(f"stream.{clicks}.recordsRead", "0")) for m in read) == 25


def test_given_a_stream_when_read_in_a_batch_up_to_a_sequence_number_then_exactly_that_range_comes(
    spark: Any, kinesis: Any, endpoint: str, new_stream: Callable[[int], str]
) -> None:
    # Given a one-shard stream of 30 records
    stream = new_stream(1)
    records = [{"PartitionKey": "k", "Data": f"r-{i}".encode()} for i in range(30)]
    answer = kinesis.put_records(StreamName=stream, Records=records)["Records"]
    shard, tenth = answer[9]["ShardId"], answer[9]["SequenceNumber"]
    # When read with spark.read, whole and up to the tenth record
    whole = spark.read.format("aws-kinesis").options(**options(endpoint, stream).as_options()).load()
    ending = '{"%s": {"iteratorType": "AFTER_SEQUENCE_NUMBER", "iteratorPosition": "%s"}}' % (shard, tenth)
    first_ten = (
        spark.read.format("aws-kinesis")
        .options(**options(endpoint, stream, ending_position=ending).as_options())
        .load()
    )
    # Then the whole read holds all 30 records (the default starts at the trim horizon), the bounded one the first 10
    assert sorted(r.data.decode() for r in whole.collect()) == sorted(f"r-{i}" for i in range(30))
    assert sorted(r.data.decode() for r in first_ten.collect()) == sorted(f"r-{i}" for i in range(10))
