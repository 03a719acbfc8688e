"""Real-time mode (``.trigger(realTime=...)``, pyspark 4.2+) through the JAR the package attached, on the emulator:
records handed over as they arrive, and every record again after a restart, records put while stopped included;
and Kinesis to Kinesis through ``kinesis_foreach``, the JVM writer real-time mode's sink allowlist accepts."""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable, List, Set, Tuple

import pyspark  # noqa: E402
import pytest
from conftest import eventually

from pyspark_kinesis import KinesisSinkOptions, KinesisSourceOptions, kinesis_foreach
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY

_VERSION = tuple(int(part) for part in pyspark.__version__.split(".")[:2])
if _VERSION < (4, 2):
    # This module runs only in the full suite (the newest pyspark); run-tests.sh never gives it an older one.
    raise RuntimeError(f"test_realtime.py needs pyspark 4.2 or newer (realTime trigger); got {pyspark.__version__}")


def _sink(directory: Path) -> Callable[[Any], None]:
    """A foreach sink (one real-time mode accepts) that appends each row to a file of its worker process."""

    def write(row: Any) -> None:
        with open(directory / f"rows-{os.getpid()}.tsv", "a", encoding="utf-8") as out:
            out.write(f"{row.shardId}\t{row.sequenceNumber}\t{row.payload}\n")

    return write


def _written(directory: Path) -> List[Tuple[str, str, str]]:
    rows = []
    for path in directory.glob("rows-*.tsv"):
        for line in path.read_text(encoding="utf-8").splitlines():
            shard, sequence, payload = line.split("\t")
            rows.append((shard, sequence, payload))
    return rows


def _read(spark: Any, stream: str, endpoint: str) -> Any:
    options = KinesisSourceOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        starting_position="TRIM_HORIZON",
    )
    return spark.readStream.format("aws-kinesis").options(**options.as_options()).load()


def _start(spark: Any, stream: str, endpoint: str, sink: Path, checkpoint: Path) -> Any:
    return (
        _read(spark, stream, endpoint)
        .selectExpr("shardId", "sequenceNumber", "CAST(data AS STRING) AS payload")
        .writeStream.foreach(_sink(sink))
        .outputMode("update")
        .option("checkpointLocation", str(checkpoint))
        .trigger(realTime="5 seconds")
        .start()
    )


def _put(kinesis: Any, stream: str, prefix: str, n: int) -> Set[str]:
    payloads = [f"{prefix}-{i}" for i in range(n)]
    kinesis.put_records(
        StreamName=stream,
        Records=[{"Data": p.encode(), "PartitionKey": f"key-{i % 5}"} for i, p in enumerate(payloads)],
    )
    return set(payloads)


def _await_payloads(sink: Path, wanted: Set[str], query: Any) -> List[Tuple[str, str, str]]:
    def complete() -> Any:
        if query.exception() is not None:
            raise AssertionError(f"the real-time query failed: {query.exception()}")
        rows = _written(sink)
        return rows if wanted <= {payload for _, _, payload in rows} else None

    return eventually(complete, 120, f"{len(wanted)} records in the real-time sink (status: {query.status})")


def test_given_a_real_time_trigger_when_records_arrive_and_the_query_restarts_then_every_record_is_handed_over(
    spark: Any, kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given a stream of two shards with records, and a real-time query over it
    stream = new_stream(2)
    sink, checkpoint = tmp_path / f"sink-{uuid.uuid4().hex[:6]}", tmp_path / "checkpoint"
    sink.mkdir()
    before = _put(kinesis, stream, "before", 30)
    query = _start(spark, stream, endpoint, sink, checkpoint)
    try:
        # When records come while it runs, it is stopped, records come while it is down, and it starts again
        during = _put(kinesis, stream, "during", 30)
        _await_payloads(sink, before | during, query)
    finally:
        query.stop()
    down = _put(kinesis, stream, "down", 30)
    query = _start(spark, stream, endpoint, sink, checkpoint)
    try:
        rows = _await_payloads(sink, before | during | down, query)
    finally:
        query.stop()

    # Then every record is in the sink, and none that was not put (a restart may hand a cut-short batch over again)
    positions = {(shard, sequence) for shard, sequence, _ in rows}
    assert {payload for _, _, payload in rows} == before | during | down
    assert len(positions) == len(before | during | down)


def _target_records(kinesis: Any, stream: str) -> List[Tuple[str, str, str, str]]:
    """(source shard, source sequence number, partition key, payload) of every record in the target stream, read
    from TRIM_HORIZON with boto3 (the writer does not aggregate here, so a Kinesis record is a row)."""
    rows = []
    for shard in kinesis.list_shards(StreamName=stream)["Shards"]:
        iterator = kinesis.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            page = kinesis.get_records(ShardIterator=iterator, Limit=1000)
            for record in page["Records"]:
                copied = json.loads(record["Data"])
                rows.append((copied["shardId"], copied["sequenceNumber"], record["PartitionKey"], copied["payload"]))
            iterator = page.get("NextShardIterator") if page["Records"] else None
    return rows


def test_given_kinesis_foreach_when_a_real_time_query_copies_a_stream_then_the_target_holds_every_record_once(
    spark: Any, kinesis: Any, endpoint: str, tls_endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given a source stream with records, and a real-time query writing them to a target through kinesis_foreach
    source, target = new_stream(2), new_stream(1)
    before = _put(kinesis, source, "before", 30)
    sink = KinesisSinkOptions(
        stream_name=target,
        region=REGION,
        endpoint_url=tls_endpoint,
        verify_certificate=False,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        aggregation_enabled=False,
    )
    rows = _read(spark, source, endpoint).selectExpr(
        "to_json(named_struct('shardId', shardId, 'sequenceNumber', sequenceNumber, 'payload', "
        "CAST(data AS STRING))) AS data",
        "partitionKey",
    )
    query = (
        kinesis_foreach(rows.writeStream, sink)
        .outputMode("update")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(realTime="5 seconds")
        .start()
    )
    try:
        # When records come while it runs
        during = _put(kinesis, source, "during", 30)

        # Then the target holds each source record exactly once, with its partition key
        def complete() -> Any:
            if query.exception() is not None:
                raise AssertionError(f"the real-time query failed: {query.exception()}")
            copied = _target_records(kinesis, target)
            return copied if before | during <= {payload for *_, payload in copied} else None

        copied = eventually(complete, 120, f"{len(before | during)} records in the target stream")
    finally:
        query.stop()
    assert Counter(payload for *_, payload in copied) == Counter(before | during)
    assert len({(shard, sequence) for shard, sequence, _, _ in copied}) == len(copied)
    assert all(key == f"key-{int(payload.rsplit('-', 1)[1]) % 5}" for _, _, key, payload in copied)


def test_given_kinesis_foreach_when_the_options_or_columns_are_wrong_then_it_fails_at_once_with_the_sinks_message(
    spark: Any, endpoint: str
) -> None:
    from pyspark.errors import IllegalArgumentException

    # Given a DataFrame without the sink's partitionKey column
    rows = _read(spark, "no-such-stream", endpoint).selectExpr("data")
    # When kinesis_foreach is given it, or options it does not take, then it fails before any query starts
    with pytest.raises(IllegalArgumentException, match="has no 'partitionKey' column"):
        kinesis_foreach(rows.writeStream, {"kinesis.region": REGION, "kinesis.streamName": "s"})
    with pytest.raises(IllegalArgumentException, match="speaks HTTPS only"):
        kinesis_foreach(rows.writeStream, {"kinesis.region": REGION, "kinesis.endpointUrl": "http://127.0.0.1:1"})
    with pytest.raises(TypeError, match="KinesisSinkOptions or a mapping"):
        kinesis_foreach(rows.writeStream, {"kinesis.sink.recordTtl": 5})  # type: ignore[dict-item]


def test_given_a_spark_connect_writer_when_kinesis_foreach_is_called_then_it_says_to_use_a_classic_session() -> None:
    # Given a writer of a Spark Connect session (its class lives in pyspark.sql.connect; no server is needed)
    connect_writer = type("DataStreamWriter", (), {"__module__": "pyspark.sql.connect.streaming.readwriter"})()
    # When kinesis_foreach is given it, then it fails saying why and what to use instead
    with pytest.raises(ValueError, match="needs a classic Spark session.*format\\('aws-kinesis'\\)"):
        kinesis_foreach(connect_writer, {"kinesis.streamName": "s"})
