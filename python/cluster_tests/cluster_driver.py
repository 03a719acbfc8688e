"""The Spark driver of a cluster fault run: one streaming query on the config's standalone master (two workers, an
executor JVM on each), run as a process of its own so that the run can SIGKILL it.

``python cluster_driver.py CONFIG.json``. The query reads the ``aws-kinesis`` source with the config's options and
writes JSON files under the config's checkpoint; with ``sinkOptions`` in the config a second query copies the same
stream into another through the ``aws-kinesis`` sink (checkpoint ``sinkCheckpoint``), so that every fault strikes the
sink too. The driver answers the run through files in the config's control directory: it writes ``ready`` once the
queries run and ``status.json`` (active tasks) every 100 ms; it obeys ``kill-executor-<n>`` (SIGKILL one
executor JVM while a task runs, then ``done-kill-executor-<n>``) and ``stop`` (stop the queries, exit 0). A query
that fails writes ``failed`` and exits 3.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List

import pyspark_kinesis


def executor_pids(app_id: str) -> List[int]:
    """The executor JVMs of this application, wherever the workers launched them (found by the app id that each
    executor's command line carries)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if b"CoarseGrainedExecutorBackend" in command and app_id.encode() in command:
                pids.append(int(entry))
    return sorted(pids)


def active_tasks(spark: Any) -> int:
    tracker = spark.sparkContext.statusTracker()
    total = 0
    for stage in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage)
        total += info.numActiveTasks if info else 0
    return total


def cluster_builder(master: str, app_name: str) -> Any:
    """A session builder for the standalone cluster at ``master``: the driver on loopback, an executor of 700 MB on
    each of the two workers, the connector attached by the package."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.executor.memory", "700m")
        .config("spark.cores.max", "2")
    )
    return pyspark_kinesis.configure_spark_with_kinesis(builder)


def build_session(config: Dict[str, Any]) -> Any:
    builder = (
        cluster_builder(config["master"], f"cluster-faults {config['name']}")
        .config("spark.ui.enabled", "false")
        # Every batch's offsets and commits stay in the checkpoint, so that a failed run's verdict can name the batches
        # that carried each missing or repeated record (explain.py); Spark keeps 100 by default. For the same reason
        # the file sink's log is never compacted: a compact file does not say which batch committed each file.
        .config("spark.sql.streaming.minBatchesToRetain", "100000")
        .config("spark.sql.streaming.fileSink.log.compactInterval", "100000")
        # Aggressive speculation: copies of any task slower than the others, so that two attempts of one batch's
        # task race for its record of where the batch ends.
        .config("spark.speculation", "true")
        .config("spark.speculation.interval", "100ms")
        .config("spark.speculation.quantile", "0.5")
        .config("spark.speculation.multiplier", "1.1")
        .config("spark.speculation.minTaskRuntime", "100ms")
        # Without this, Spark 3.4+ speculates only tasks whose input rate it finds low, which a source that reads
        # until it has caught up rarely shows.
        .config("spark.speculation.efficiency.enabled", "false")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", config["eventLogDir"])
        .config("spark.eventLog.compress", "false")  # read by the run, to count speculative copies
    )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


def start_queries(spark: Any, config: Dict[str, Any]) -> List[Any]:
    """The file-sink query, then the Kinesis-sink query (reading with ``copySourceOptions``) when the config has
    ``sinkOptions``."""
    reader = spark.readStream.format("aws-kinesis").options(**config["sourceOptions"])
    # A batch a second: the run's pace (20 records/s) needs no more, and each batch costs the two cores it shares.
    trigger = {"processingTime": "1 second"}
    # Every row of a batch's first task waits 20 ms: that task runs longer than the other, so that speculation starts
    # a copy of it on the other host, and two attempts of one task race to record where the batch ends.
    rows = reader.load().selectExpr(
        "shardId", "sequenceNumber", "subSequenceNumber", "CAST(data AS STRING) AS data",
        "reflect('java.lang.Thread', 'sleep', CAST(IF(spark_partition_id() = 0, 20, 0) AS BIGINT)) AS pause",
    )  # fmt: skip
    files = rows.writeStream.format("json").option("path", config["outputDir"])
    queries = [files.option("checkpointLocation", config["checkpoint"]).trigger(**trigger).start()]
    if "sinkOptions" in config:
        # Each output row names the record it came from, so that the run can tell lost rows from duplicates.
        copy_reader = spark.readStream.format("aws-kinesis").options(**config["copySourceOptions"])
        copies = copy_reader.load().selectExpr("concat(shardId, '|', sequenceNumber) AS data", "partitionKey")
        sink = copies.writeStream.format("aws-kinesis").options(**config["sinkOptions"])
        queries.append(sink.option("checkpointLocation", config["sinkCheckpoint"]).trigger(**trigger).start())
    return queries


def control_loop(spark: Any, queries: List[Any], control: Path, rng: random.Random) -> None:
    """Writes the status file and obeys the run's commands until ``stop``."""
    done = set()
    while True:
        status = {"activeTasks": active_tasks(spark), "time": time.time()}
        tmp = control / "status.json.tmp"
        tmp.write_text(json.dumps(status))
        tmp.replace(control / "status.json")
        for command in sorted(p.name for p in control.iterdir()):
            if command in done:
                continue
            if command == "stop":
                for query in queries:
                    query.stop()
                return
            if command.startswith("kill-executor-"):
                done.add(command)
                result = kill_executor_mid_batch(spark, rng)
                (control / f"done-{command}").write_text(json.dumps(result))
        time.sleep(0.1)


def kill_executor_mid_batch(spark: Any, rng: random.Random, wait: float = 30.0) -> Dict[str, Any]:
    """SIGKILLs one executor JVM as soon as some task is running (waits at most ``wait`` s for one)."""
    deadline = time.monotonic() + wait
    while active_tasks(spark) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    mid_batch = active_tasks(spark) > 0
    pids = executor_pids(spark.sparkContext.applicationId)
    if not pids:
        return {"pid": None, "midBatch": mid_batch}
    pid = rng.choice(pids)
    os.kill(pid, signal.SIGKILL)
    return {"pid": pid, "midBatch": mid_batch}


def main() -> int:
    config = json.loads(Path(sys.argv[1]).read_text())
    control = Path(config["controlDir"])
    spark = build_session(config)
    queries = start_queries(spark, config)
    (control / "ready").write_text(str(os.getpid()))
    controller = threading.Thread(
        target=control_loop, args=(spark, queries, control, random.Random(config["seed"])), daemon=True
    )
    controller.start()
    try:
        spark.streams.awaitAnyTermination()
    except Exception:  # a query failed: the run fails on it, with the trace
        (control / "failed").write_text(traceback.format_exc())
        return 3
    if not (control / "stop").exists():
        (control / "failed").write_text("a query ended although the run did not stop it")
        return 3
    controller.join(120)  # stopped on the run's command: the controller stops every query before it returns
    failures = [str(q.exception()) for q in queries if q.exception() is not None]
    if failures:
        (control / "failed").write_text("\n".join(failures))
        return 3
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
