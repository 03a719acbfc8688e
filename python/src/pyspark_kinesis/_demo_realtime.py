"""The demo's real-time mode: every event through Spark's ``trigger(realTime=...)`` as it arrives, and how long each
took from the producer to Spark.

The latency of an event is measured inside Spark, when its row passes the query's projection (the JVM's clock, read
per row through ``reflect``), minus the time the producer stamped into it. PySpark's ``foreach`` sink receives a
real-time batch's rows in its Python worker only when the batch ends, so the demo prints one line per batch (every
``--trigger-seconds``, 5 at least), while each figure in it is the per-event latency measured as the event went by.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional

from ._emulator import PrerequisiteMissing

#: Spark refuses real-time batches shorter than ``spark.sql.streaming.realTimeMode.minBatchDuration`` (5 s).
MIN_BATCH_SECONDS = 5


def check_real_time_mode() -> None:
    """Raises PrerequisiteMissing, naming the pyspark to install, when the installed one has no real-time trigger."""
    import pyspark

    major, minor = (int(part) for part in pyspark.__version__.split(".")[:2])
    if (major, minor) < (4, 2):
        raise PrerequisiteMissing(
            f"--realtime needs pyspark 4.2 or newer (real-time mode came in Spark 4.1, its PySpark trigger in 4.2); "
            f"this is pyspark {pyspark.__version__}. Run: PYSPARK_VERSION=4.3.0 bin/demo --realtime"
        )


class LatencyFiles:
    """The latencies the real-time query's sink appends, one file per Python worker; :meth:`report` summarises what
    arrived since its previous call."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._read: Dict[Path, int] = {}

    def report(self) -> Optional[str]:
        """Count, p50, p99 and max of the latencies written since the last report; None when none came."""
        fresh: List[int] = []
        for path in sorted(self.directory.glob("latency-*.txt")):
            with open(path, "rb") as f:
                f.seek(self._read.get(path, 0))
                chunk = f.read()
            complete = chunk[: chunk.rfind(b"\n") + 1]
            self._read[path] = self._read.get(path, 0) + len(complete)
            fresh.extend(int(line) for line in complete.split())
        if not fresh:
            return None
        fresh.sort()
        p50, p99 = fresh[len(fresh) // 2], fresh[min(len(fresh) - 1, int(len(fresh) * 0.99))]
        return (
            f"Real-time batch: {len(fresh)} events, each from the producer to Spark in p50 {p50} ms, "
            f"p99 {p99} ms, max {fresh[-1]} ms"
        )


def start_real_time_query(spark: Any, options: Any, checkpoint: str, latencies: Path, batch_seconds: int) -> Any:
    """Starts the query that hands every event through as it arrives and notes its latency in ``latencies``."""
    directory = str(latencies)

    def note_latency(row: Any) -> None:
        with open(os.path.join(directory, f"latency-{os.getpid()}.txt"), "a", encoding="utf-8") as out:
            out.write(f"{row.latencyMs}\n")

    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    # reflect() is evaluated per row, as the row goes by; current_timestamp() would be the batch's start.
    latency = (
        "CAST(reflect('java.lang.System', 'currentTimeMillis') AS BIGINT) - "
        "CAST(get_json_object(CAST(data AS STRING), '$.sentAtMs') AS BIGINT) AS latencyMs"
    )
    return (
        events.selectExpr(latency)
        .writeStream.foreach(note_latency)
        .outputMode("update")  # the one output mode real-time mode has
        .option("checkpointLocation", os.path.join(checkpoint, "query"))
        .trigger(realTime=f"{batch_seconds} seconds")
        .start()
    )
