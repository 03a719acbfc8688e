"""A real-time query in a process of its own, for tests that need their own Spark master or kill the query's process
(test_realtime_stateful.py). It runs until a line ``stop`` comes on standard input (then stops the query and exits 0)
or until it is killed, and prints ``QUERY-STARTED <the class running its batches>`` once the query runs.

    python realtime_query.py stateful|async|retry ENDPOINT STREAM CHECKPOINT SINK_DIR [spark.conf=value ...]

``stateful``: the issue's query on ``local[4]`` with the connector's default options: ``dropDuplicates`` on a record's
position, then a count per shard, into ``foreach`` (each update a line ``shardId<TAB>count``), 10-second batches.
``async``: a stateless query with asynchronous progress tracking (each row a line ``shardId<TAB>sequenceNumber<TAB>
payload``), 5-second batches. ``retry``: the same stateless query without it, whose projection fails the first
attempt of partition 0 once, at its second row (``_FAIL_ONCE``), and whose ``foreach`` notes each attempt
(``_NotingAttempts``): with ``spark.master=local[4,2]`` Spark runs that task again within its batch. Each Python worker
appends to a file of its own in SINK_DIR.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict

from pyspark import TaskContext
from pyspark.sql import SparkSession

import pyspark_kinesis
from pyspark_kinesis import KinesisSourceOptions
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY


def _appender(sink: str, line: Callable[[Any], str]) -> Callable[[Any], None]:
    def write(row: Any) -> None:
        with open(Path(sink) / f"rows-{os.getpid()}.tsv", "a", encoding="utf-8") as out:
            out.write(line(row) + "\n")

    return write


# The retry's injected failure, raised in the JVM while the task reads its rows, so before Spark asks to commit them. A
# Python foreach writer's exception reaches the JVM only when the writer closes, after Spark authorised the attempt to
# commit; the retry, which at the batch's end reads nothing and asks at once, is then denied if the driver still holds
# that authorisation, and Spark 4.3 counts the denial as a task failure (docs/real-time-mode.md). A system property of
# the query's JVM (local mode: driver and executors in one) makes it fail once in the query's life: partition 0's first
# row sets one, its next row sets the other and fails (reflect gives a null result as the string 'null').
_FAIL_ONCE = (
    "CASE WHEN spark_partition_id() != 0 THEN NULL"
    " WHEN reflect('java.lang.System', 'setProperty', 'retry.firstRowSeen', 'true') = 'null' THEN NULL"
    " WHEN reflect('java.lang.System', 'setProperty', 'retry.failedOnce', 'true') = 'null'"
    " THEN raise_error('a failure injected into the first attempt of partition 0') END"
)


class _NotingAttempts:
    """A ``foreach`` writer passing rows to ``write``; each attempt of a task leaves a file
    ``opened-<partition>-<epoch>-<attempt>`` in the sink folder."""

    def __init__(self, sink: str, write: Callable[[Any], None]) -> None:
        self.sink = Path(sink)
        self.write = write

    def open(self, partition_id: int, epoch_id: int) -> bool:
        (self.sink / f"opened-{partition_id}-{epoch_id}-{TaskContext.get().attemptNumber()}").touch()
        return True

    def process(self, row: Any) -> None:
        self.write(row)

    def close(self, error: Any) -> None:
        pass


def _await_stop(stop: threading.Event) -> None:
    for line in sys.stdin:
        if line.strip() == "stop":
            stop.set()
            return


def main(kind: str, endpoint: str, stream: str, checkpoint: str, sink: str, *confs: str) -> None:
    builder = (
        SparkSession.builder.master("local[4]")
        .appName(f"realtime {kind} query")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    for conf in confs:
        key, value = conf.split("=", 1)
        builder = builder.config(key, value)
    spark = pyspark_kinesis.configure_spark_with_kinesis(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    options = KinesisSourceOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        starting_position="TRIM_HORIZON",
    )
    records = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    extra: Dict[str, str] = {}
    if kind == "stateful":
        position = ["streamName", "shardId", "sequenceNumber", "subSequenceNumber"]
        rows = records.dropDuplicates(position).groupBy("shardId").count()
        write = _appender(sink, lambda r: f"{r.shardId}\t{r['count']}")
        batch = "10 seconds"
    else:
        payload = f"coalesce({_FAIL_ONCE}, CAST(data AS STRING))" if kind == "retry" else "CAST(data AS STRING)"
        rows = records.selectExpr("shardId", "sequenceNumber", f"{payload} AS payload")
        write = _appender(sink, lambda r: f"{r.shardId}\t{r.sequenceNumber}\t{r.payload}")
        batch = "5 seconds"
        if kind == "retry":
            write = _NotingAttempts(sink, write)
        else:
            # Spark 4.3 refuses a real-time query whose async progress tracking checkpoints at an interval
            extra = {"asyncProgressTrackingEnabled": "true", "asyncProgressTrackingCheckpointIntervalMs": "0"}
    query = (
        rows.writeStream.foreach(write)
        .outputMode("update")
        .option("checkpointLocation", checkpoint)
        .options(**extra)
        .trigger(realTime=batch)
        .start()
    )
    # which execution runs the batches, so a test can tell async progress tracking is on
    print("QUERY-STARTED", query._jsq.streamingQuery().getClass().getSimpleName(), flush=True)
    stop = threading.Event()
    threading.Thread(target=_await_stop, args=(stop,), daemon=True).start()
    while not stop.is_set() and query.exception() is None:
        stop.wait(0.5)
    error = query.exception()
    query.stop()
    spark.stop()
    if error is not None:
        print(f"query failed: {error}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main(*sys.argv[1:])
