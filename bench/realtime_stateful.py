"""Put-to-Spark latency of stateful real-time queries (Spark 4.3, pyspark) on local[4], against the stateless query in
the same run: bench/README.md, "Stateful real-time mode".

    python bench/realtime_stateful.py --endpoint http://127.0.0.1:4568 [--seconds 30] [--rate 200] [--batch 10]

Run it with a pyspark 4.3 environment that has the wheel (bench/pyspark-env prints one). Each query reads a new
4-shard stream from TRIM_HORIZON with default options, 10-second batches, `spark.sql.shuffle.partitions=1` (the two
shuffle stages of dropDuplicates then a count leave 2 of local[4]'s slots to the Kinesis tasks). A producer puts
`--rate` records a second, each stamped with its send time; the query reads the JVM's clock per row where the row
passes its last operator (``reflect``), so a figure is the per-record latency as the record went by, whenever the
Python ``foreach`` sink receives it. The aggregate's figure is per update: the clock minus the newest stamp the
updated count includes. Records put during the warm-up (`--warm-up`, 20 s) are not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List

import boto3
from pyspark.sql import DataFrame, SparkSession

import pyspark_kinesis
from pyspark_kinesis import KinesisSourceOptions
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY

NOW = "CAST(reflect('java.lang.System', 'currentTimeMillis') AS BIGINT)"
SENT = "CAST(get_json_object(CAST(data AS STRING), '$.sentAtMs') AS BIGINT)"
POSITION = ["streamName", "shardId", "sequenceNumber", "subSequenceNumber"]

#: Each query: a name, and what it makes of the records: a DataFrame with a column latencyMs and sentAtMs.
QUERIES: Dict[str, Callable[[DataFrame], DataFrame]] = {
    "stateless (projection only)": lambda r: r.selectExpr(f"{SENT} AS sentAtMs").selectExpr(
        "sentAtMs", f"{NOW} - sentAtMs AS latencyMs"
    ),
    "dropDuplicates on the position": lambda r: (
        r.dropDuplicates(POSITION)
        .selectExpr(f"{SENT} AS sentAtMs")
        .selectExpr("sentAtMs", f"{NOW} - sentAtMs AS latencyMs")
    ),
    "dropDuplicates, then count per shard": lambda r: (
        r.dropDuplicates(POSITION)
        .selectExpr("shardId", f"{SENT} AS sent")
        .groupBy("shardId")
        .agg({"sent": "max", "*": "count"})
        .withColumnRenamed("max(sent)", "sentAtMs")
        .selectExpr("sentAtMs", f"{NOW} - sentAtMs AS latencyMs")
    ),
}


def _sink(directory: str) -> Callable[[Any], None]:
    def write(row: Any) -> None:
        with open(os.path.join(directory, f"latency-{os.getpid()}.tsv"), "a", encoding="utf-8") as out:
            out.write(f"{row.sentAtMs}\t{row.latencyMs}\n")

    return write


def _produce(kinesis: Any, stream: str, rate: int, until: float) -> int:
    """Puts `rate` records a second, in calls every 50 ms, until `until`; returns how many."""
    sent, per_call, started = 0, max(1, rate // 20), time.time()
    while time.time() < until:
        now_ms = int(time.time() * 1000)
        records = [
            {"Data": json.dumps({"sentAtMs": now_ms}).encode(), "PartitionKey": uuid.uuid4().hex}
            for _ in range(per_call)
        ]
        kinesis.put_records(StreamName=stream, Records=records)
        sent += per_call
        time.sleep(max(0.0, started + sent / rate - time.time()))
    return sent


def _percentile(values: List[int], q: float) -> int:
    return values[min(len(values) - 1, int(len(values) * q))]


def measure(spark: Any, kinesis: Any, endpoint: str, name: str, args: argparse.Namespace) -> str:
    stream = f"bench-rt-{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(StreamName=stream, ShardCount=4)
    kinesis.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})
    options = KinesisSourceOptions(
        stream_name=stream,
        region=REGION,
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_key=SECRET_KEY,
        starting_position="TRIM_HORIZON",
    )
    out = tempfile.mkdtemp(prefix="bench-rt-")
    records = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    query = (
        QUERIES[name](records)
        .writeStream.foreach(_sink(out))
        .outputMode("update")
        .option("checkpointLocation", os.path.join(out, "checkpoint"))
        .trigger(realTime=f"{args.batch} seconds")
        .start()
    )
    try:
        measured_from = time.time() + args.warm_up
        sent = _produce(kinesis, stream, args.rate, measured_from + args.seconds)
        time.sleep(args.batch + 5)  # the Python sink receives a batch's rows when the batch ends
        if query.exception() is not None:
            raise RuntimeError(f"{name}: the query failed: {query.exception()}")
    finally:
        query.stop()
    latencies = sorted(
        int(latency)
        for path in Path(out).glob("latency-*.tsv")
        for sent_at, latency in (line.split("\t") for line in path.read_text("utf-8").splitlines())
        if int(sent_at) >= measured_from * 1000
    )
    if not latencies:
        return f"| {name} | no row measured ({sent} records sent) |"
    return (
        f"| {name} | {len(latencies)} | {_percentile(latencies, 0.5)} | {_percentile(latencies, 0.95)} | "
        f"{_percentile(latencies, 0.99)} | {latencies[-1]} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", required=True, help="kinesis-mock's plain endpoint")
    parser.add_argument("--seconds", type=int, default=30, help="measured seconds per query")
    parser.add_argument("--warm-up", type=int, default=20, help="seconds put but not counted, per query")
    parser.add_argument("--rate", type=int, default=200, help="records per second")
    parser.add_argument("--batch", type=int, default=10, help="real-time batch length, seconds")
    args = parser.parse_args()
    builder = (
        SparkSession.builder.master("local[4]")
        .appName("stateful real-time latency")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    spark = pyspark_kinesis.configure_spark_with_kinesis(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    kinesis = boto3.client(
        "kinesis",
        endpoint_url=args.endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_KEY,
    )
    rows = [measure(spark, kinesis, args.endpoint, name, args) for name in QUERIES]
    print(f"pyspark {spark.version}, local[4], {args.rate} records/s on 4 shards, {args.batch}-second batches")
    print("| query | rows | p50 ms | p95 ms | p99 ms | max ms |\n|---|---|---|---|---|---|")
    print("\n".join(rows))
    spark.stop()


if __name__ == "__main__":
    main()
