"""The main job: a Kinesis pipeline end to end, on this machine.

``python -m pyspark_kinesis.demo`` starts kinesis-mock (the Kinesis emulator) on 127.0.0.1, creates a stream,
produces JSON events into it continuously, and runs a PySpark Structured Streaming query that reads them
through the connector and prints a running count and amount per event type, how far behind the stream's tip
the query is (once the source reports it) and where the Spark UI is. It stops after ``--seconds`` or on
Ctrl-C, emulator included.

``--endpoint URL`` runs the same pipeline against a Kinesis emulator that is already running, such as the
repository's docker-compose LocalStack (``http://localhost:4566``), instead of starting kinesis-mock.

``--stream NAME --region REGION`` reads that AWS stream instead (credentials from the AWS default chain)
and prints running counts per shard; nothing is produced into it.

``--realtime`` runs the query in Spark's real-time mode (``trigger(realTime=...)``, pyspark 4.2 or newer) instead
of micro-batches and prints, for each real-time batch, how long its events took from the producer to Spark (p50,
p99, max): each event is handed through as it arrives (see ``_demo_realtime``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any, Dict, List, Optional

from ._demo_realtime import MIN_BATCH_SECONDS, LatencyFiles, check_real_time_mode, start_real_time_query
from ._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY, KinesisMock, PrerequisiteMissing

_LOG_CONFIG = Path(__file__).resolve().parent / "demo_log4j2.properties"
EVENT_SCHEMA = "eventType STRING, userId STRING, amount DOUBLE"
EVENT_TYPES = ("click", "view", "purchase", "signup")


class Stop(Exception):
    """The person asked the demo to stop (Ctrl-C or SIGTERM) while it was starting up."""


class StopRequests:
    """Turns the first Ctrl-C or SIGTERM into a request that the main loop honours between calls into Spark:
    an exception raised in the middle of a py4j call would break the connection to the JVM and leave nothing
    to stop cleanly. A second Ctrl-C interrupts at once."""

    def __init__(self) -> None:
        self.requested = threading.Event()

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)

    def uninstall(self) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def check(self) -> None:
        """Raises Stop when a stop was asked for (between start-up steps)."""
        if self.requested.is_set():
            raise Stop()

    def _on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        if self.requested.is_set():
            raise KeyboardInterrupt()
        self.requested.set()
        print("\n[demo] Stopping (Ctrl-C again to force) ...", flush=True)


def _say(message: str) -> None:
    print(f"[demo] {message}", flush=True)


def _check_prerequisites(local: bool) -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise PrerequisiteMissing(
            "Java was not found: Spark needs Java 17 or newer. Install it (Debian/Ubuntu: 'apt-get install "
            "openjdk-17-jdk-headless'; macOS: 'brew install openjdk@17') or set JAVA_HOME, then run again."
        )
    missing = [m for m in (("pyspark", "pyspark==3.5.*"), ("boto3", "boto3")) if not _importable(m[0])]
    if local and missing:
        raise PrerequisiteMissing(
            f"Python packages missing: {', '.join(m[0] for m in missing)}. Install them with "
            f"'pip install {' '.join(m[1] for m in missing)}' (or pip install 'pyspark-kinesis[demo]')."
        )
    if not local and not _importable("pyspark"):
        raise PrerequisiteMissing("pyspark is not installed: 'pip install pyspark==3.5.*', then run again.")


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


class Producer(threading.Thread):
    """Puts batches of JSON events into the stream until stopped."""

    def __init__(self, client: Any, stream: str) -> None:
        super().__init__(name="demo-producer", daemon=True)
        self.client, self.stream = client, stream
        self.sent = 0
        self.stopping = threading.Event()
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        rng = random.Random(42)
        try:
            while not self.stopping.is_set():
                records = []
                for _ in range(20):
                    user = f"user-{rng.randrange(100)}"
                    event = {
                        "eventType": rng.choice(EVENT_TYPES),
                        "userId": user,
                        "amount": round(rng.random() * 100, 2),
                        # the real-time demo's latency: the JVM's wall clock when Spark sees the event, minus this
                        "sentAtMs": int(time.time() * 1000),
                    }
                    records.append({"Data": json.dumps(event).encode(), "PartitionKey": user})
                self.client.put_records(StreamName=self.stream, Records=records)
                self.sent += len(records)
                self.stopping.wait(0.2)
        except BaseException as e:  # reported by the main thread
            self.error = e


def _demo_stream(client: Any, shards: int) -> str:
    """Creates the stream demo-events, or reuses it when an emulator that keeps its state (LocalStack) has it."""
    name = "demo-events"
    try:
        client.create_stream(StreamName=name, ShardCount=shards)
        what = f"Created stream {name} with {shards} shards"
    except client.exceptions.ResourceInUseException:
        what = f"Reusing stream {name}"
    client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})
    _say(f"{what}; producing 100 JSON events a second into it")
    return name


def lag_line(progress: Optional[Dict[str, Any]]) -> Optional[str]:
    """How far behind the stream's tip a query progress says the source is (its ``*BehindLatest`` metrics, such as
    ``avgMsBehindLatest``), or None while the source reports none."""
    metrics = {
        key: value
        for source in (progress or {}).get("sources", [])
        for key, value in sorted((source.get("metrics") or {}).items())
        if "BehindLatest" in key
    }
    if not metrics:
        return None
    return "Behind the stream's tip: " + ", ".join(f"{key} {value}" for key, value in metrics.items())


def _report_lag(progress: Optional[Dict[str, Any]], reported: int) -> int:
    """Prints the lag of a micro-batch not reported yet; returns the last batch id reported."""
    batch = (progress or {}).get("batchId", -1)
    line = lag_line(progress) if batch > reported else None
    if line is not None:
        _say(f"Batch {batch}: {line}")
    return max(batch, reported)


def _parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m pyspark_kinesis.demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=60, help="how long to run (default 60; Ctrl-C stops earlier)")
    parser.add_argument(
        "--endpoint",
        help="a running Kinesis emulator to use, such as LocalStack's "
        "http://localhost:4566, instead of starting kinesis-mock",
    )
    parser.add_argument("--stream", help="read this AWS stream instead of a local emulator")
    parser.add_argument(
        "--region",
        help=f"the AWS region of --stream (default: the AWS default region chain) or of --endpoint (default {REGION})",
    )
    parser.add_argument("--shards", type=int, default=2, help="shards of the local stream (default 2)")
    parser.add_argument(
        "--trigger-seconds",
        type=int,
        help=f"seconds between micro-batches (default 2), or a real-time batch's duration (default and least "
        f"{MIN_BATCH_SECONDS})",
    )
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="real-time mode (pyspark 4.2+): print how long events took from the producer to Spark",
    )
    args = parser.parse_args(argv)
    if args.realtime and args.stream:
        parser.error("--realtime measures events the demo produces itself: leave out --stream")
    if args.trigger_seconds is None:
        args.trigger_seconds = MIN_BATCH_SECONDS if args.realtime else 2
    if args.realtime and args.trigger_seconds < MIN_BATCH_SECONDS:
        parser.error(
            f"a real-time batch lasts at least {MIN_BATCH_SECONDS} seconds (Spark's minimum): "
            f"give --trigger-seconds {MIN_BATCH_SECONDS} or more"
        )
    if args.region and not (args.stream or args.endpoint):
        parser.error("--region goes with --stream or --endpoint")
    if args.stream and args.endpoint:
        parser.error("--stream reads AWS; --endpoint an emulator: give one of them")
    if args.seconds <= 0 or args.shards <= 0 or args.trigger_seconds <= 0:
        parser.error("--seconds, --shards and --trigger-seconds must be positive")
    return args


def run(args: argparse.Namespace) -> int:
    """Runs the pipeline; returns the exit status."""
    local = args.stream is None
    _check_prerequisites(local)
    if args.realtime:
        check_real_time_mode()
    from pyspark_kinesis import KinesisSourceOptions

    emulator: Optional[KinesisMock] = None
    producer: Optional[Producer] = None
    spark = None
    checkpoint = tempfile.mkdtemp(prefix="pyspark-kinesis-demo-")
    stop = StopRequests()
    stop.install()
    try:
        if local:
            import boto3  # type: ignore[import-untyped,unused-ignore]

            endpoint, region = args.endpoint, args.region or REGION
            if endpoint is None:
                emulator = KinesisMock()
                _say("Starting kinesis-mock (the Kinesis emulator) on 127.0.0.1 ...")
                endpoint = emulator.start()
                stop.check()
                _say(f"kinesis-mock is running at {endpoint} (pid {emulator.process.pid if emulator.process else '?'})")
            else:
                _say(f"Using the Kinesis emulator at {endpoint}")
            client = boto3.client(
                "kinesis",
                endpoint_url=endpoint,
                region_name=region,
                aws_access_key_id=ACCESS_KEY_ID,
                aws_secret_access_key=SECRET_KEY,
            )
            stream = _demo_stream(client, args.shards)
            stop.check()
            producer = Producer(client, stream)
            producer.start()
            # A new checkpoint each run and TRIM_HORIZON: a reused stream's earlier events are counted again.
            options = KinesisSourceOptions(
                stream_name=stream,
                region=region,
                endpoint_url=endpoint,
                aws_access_key_id=ACCESS_KEY_ID,
                aws_secret_key=SECRET_KEY,
                starting_position="TRIM_HORIZON",
            )
        else:
            _say(f"Reading the AWS stream {args.stream} (credentials from the AWS default chain) from LATEST")
            options = KinesisSourceOptions(stream_name=args.stream, region=args.region, starting_position="LATEST")

        spark = _start_spark()
        stop.install()  # again: SparkContext installs a SIGINT handler of its own that interrupts py4j calls
        stop.check()
        latencies = LatencyFiles(Path(checkpoint) / "latencies") if args.realtime else None
        if latencies is not None:
            query = start_real_time_query(spark, options, checkpoint, latencies.directory, args.trigger_seconds)
        else:
            query = _start_query(spark, options, local, checkpoint, args.trigger_seconds)
        _say(f"Streaming for {args.seconds} s (Ctrl-C stops earlier); the Spark UI is at {spark.sparkContext.uiWebUrl}")
        deadline = time.monotonic() + args.seconds
        reported = -1
        while query.isActive and time.monotonic() < deadline and not stop.requested.is_set():
            query.awaitTermination(max(0.1, min(1.0, deadline - time.monotonic())))
            line = latencies.report() if latencies is not None else None
            if line is not None:
                _say(line)
            if latencies is None:
                reported = _report_lag(query.lastProgress, reported)
            if producer is not None and producer.error is not None:
                raise RuntimeError(f"the producer failed: {producer.error}") from producer.error
        if not query.isActive and query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        batches = (query.lastProgress or {}).get("batchId", -1) + 1
        # Stopping interrupts the running micro-batch, which Spark logs as an aborted write: nothing is wrong.
        spark.sparkContext.setLogLevel("OFF")
        query.stop()
        produced = f", {producer.sent} events produced" if producer is not None else ""
        kind = "real-time batches" if args.realtime else "micro-batches"
        _say(f"Stopped after {batches} {kind}{produced}.")
        return 0
    except Stop:
        _say("Stopped during start-up.")
        return 0
    except KeyboardInterrupt:
        _say("Interrupted: stopping what was started ...")
        return 130
    finally:
        stop.uninstall()
        if producer is not None:
            producer.stopping.set()
            producer.join(10)
        if spark is not None:
            # Stopping Spark interrupts its state-store maintenance and running tasks, which log errors; nothing
            # is wrong.
            with contextlib.suppress(Exception):
                spark.sparkContext.setLogLevel("OFF")
            spark.stop()
        if emulator is not None:
            emulator.stop()
            _say("kinesis-mock stopped.")
        shutil.rmtree(checkpoint, ignore_errors=True)


def _start_spark() -> Any:
    from pyspark.sql import SparkSession

    from pyspark_kinesis import configure_spark_with_kinesis

    _say("Starting Spark (local[2]) with the connector JAR attached ...")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("pyspark-kinesis demo")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_LOG_CONFIG.as_uri()}")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    return configure_spark_with_kinesis(builder).getOrCreate()


def _start_query(spark: Any, options: Any, local: bool, checkpoint: str, trigger_seconds: int) -> Any:
    from pyspark.sql import functions as F

    from pyspark_kinesis import parse_json_payload

    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    if local:
        totals = (
            parse_json_payload(events, EVENT_SCHEMA)
            .groupBy("eventType")
            .agg(F.count(F.lit(1)).alias("events"), F.round(F.sum("amount"), 2).alias("amount"))
            .orderBy("eventType")
        )
    else:
        totals = (
            events.groupBy("shardId")
            .agg(
                F.count(F.lit(1)).alias("records"),
                F.sum(F.length("data")).alias("bytes"),
                F.max("approximateArrivalTimestamp").alias("latestArrival"),
            )
            .orderBy("shardId")
        )
    return (
        totals.writeStream.outputMode("complete")
        .format("console")
        .option("truncate", "false")
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime=f"{trigger_seconds} seconds")
        .start()
    )


def main(argv: Optional[List[str]] = None) -> int:
    args = _parse_args(argv)
    try:
        return run(args)
    except PrerequisiteMissing as e:
        print(f"demo: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
