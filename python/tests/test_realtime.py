"""Real-time mode (``.trigger(realTime=...)``, pyspark 4.2+) through the JAR the package attached, on the emulator:
records handed over as they arrive, and every record again after a restart, records put while stopped included."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any, Callable, List, Set, Tuple

import pyspark  # noqa: E402
from conftest import eventually

from pyspark_kinesis import KinesisSourceOptions
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


def _start(spark: Any, stream: str, endpoint: str, sink: Path, checkpoint: Path) -> Any:
    options = KinesisSourceOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        starting_position="TRIM_HORIZON",
    )
    return (
        spark.readStream.format("aws-kinesis")
        .options(**options.as_options())
        .load()
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
