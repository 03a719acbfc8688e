"""Spark 4.3's real-time mode beyond stateless queries, on ``local[4]`` in a process of its own (realtime_query.py):
a stateful query (``dropDuplicates`` then a count per shard) that fits its batches into the cluster's slots, a
stateless query with asynchronous progress tracking that a SIGKILL interrupts while records arrive, and a stateless
query one of whose tasks Spark runs again within its batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import pyspark
from conftest import eventually

_VERSION = tuple(int(part) for part in pyspark.__version__.split(".")[:2])
if _VERSION < (4, 3):
    # Stateful operators and async progress tracking in real-time mode came with Spark 4.3; this module runs only in
    # the full suite, on the newest pyspark.
    raise RuntimeError(f"test_realtime_stateful.py needs pyspark 4.3 or newer; got {pyspark.__version__}")

_DRIVER = Path(__file__).parent / "realtime_query.py"


class Query:
    """A real-time query run by realtime_query.py; its output is kept for failure messages."""

    def __init__(self, kind: str, endpoint: str, stream: str, checkpoint: Path, sink: Path, *confs: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(_DRIVER), kind, endpoint, stream, str(checkpoint), str(sink), *confs],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: Spark's JVM with it, for kill()
        )
        self.lines: List[str] = []
        self._reader = threading.Thread(target=lambda: self.lines.extend(iter(self.process.stdout.readline, "")))
        self._reader.start()
        eventually(lambda: self._alive_and("QUERY-STARTED"), 180, f"the {kind} query to start")
        #: the class that runs the query's batches (realtime_query.py prints it after QUERY-STARTED)
        self.execution = self.output().split("QUERY-STARTED", 1)[1].split()[0]

    def _alive_and(self, text: str) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"the query's process ended ({self.process.returncode}):\n{self.output()[-6000:]}")
        return text in self.output()

    def output(self) -> str:
        return "".join(self.lines)

    def check(self) -> None:
        """Fails the test, with the query's output, if its process has ended."""
        self._alive_and("")

    def ended(self, timeout: float) -> int:
        """Waits for the query's process to end; its exit status."""
        status = self.process.wait(timeout)
        self._reader.join(10)
        return status

    def stop(self) -> None:
        """Stops the query cleanly: it commits nothing more and its process exits 0."""
        self.process.stdin.write("stop\n")
        self.process.stdin.flush()
        assert self.ended(120) == 0, self.output()[-6000:]

    def kill(self) -> None:
        """SIGKILLs the query's process group: the Python driver and Spark's JVM at once, no shutdown hook run."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.ended(30)


def _put(kinesis: Any, stream: str, prefix: str, n: int) -> Dict[str, Tuple[str, str]]:
    """Puts ``n`` records; returns each payload's (shard, sequence number) as Kinesis acknowledged it."""
    payloads = [f"{prefix}-{i}" for i in range(n)]
    answer = kinesis.put_records(
        StreamName=stream,
        Records=[{"Data": p.encode(), "PartitionKey": f"key-{i}"} for i, p in enumerate(payloads)],
    )
    assert answer.get("FailedRecordCount", 0) == 0, answer
    return {p: (r["ShardId"], r["SequenceNumber"]) for p, r in zip(payloads, answer["Records"])}


def _lines(sink: Path) -> List[List[str]]:
    return [line.split("\t") for path in sink.glob("rows-*.tsv") for line in path.read_text("utf-8").splitlines()]


def _counts(sink: Path) -> Dict[str, int]:
    """Each shard's count as the idempotent sink holds it: the last (largest) update of an ever-growing count."""
    counts: Dict[str, int] = {}
    for shard, count in _lines(sink):
        counts[shard] = max(counts.get(shard, 0), int(count))
    return counts


def _commits(checkpoint: Path) -> Set[int]:
    return {int(p.name) for p in (checkpoint / "commits").glob("[0-9]*")}


def _dirs(tmp_path: Path) -> Tuple[Path, Path]:
    """A query's checkpoint location and its (created) sink folder."""
    sink = tmp_path / "sink"
    sink.mkdir()
    return tmp_path / "checkpoint", sink


def _stateful(endpoint: str, stream: str, checkpoint: Path, sink: Path, *confs: str) -> Query:
    # Two shuffle stages (dropDuplicates', then the count's) of one partition each leave 2 of local[4]'s 4 slots
    return Query("stateful", endpoint, stream, checkpoint, sink, "spark.sql.shuffle.partitions=1", *confs)


def test_given_the_issues_stateful_query_on_local_4_when_records_arrive_and_it_restarts_then_each_counts_once(
    kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given a 4-shard stream with records, and dropDuplicates then a count per shard in real-time mode on local[4]
    stream = new_stream(4)
    checkpoint, sink = _dirs(tmp_path)
    put = _put(kinesis, stream, "before", 40)
    query = _stateful(endpoint, stream, checkpoint, sink)
    try:
        # When records come while it runs, it commits batches, stops, records come while it is down, and it restarts
        put.update(_put(kinesis, stream, "during", 40))
        wanted = Counter(shard for shard, _ in put.values())
        eventually(
            lambda: query.check() or (_counts(sink) == wanted and len(_commits(checkpoint)) >= 2),
            180,
            f"counts {dict(wanted)} and two committed batches",
        )
    finally:
        query.stop()
    put.update(_put(kinesis, stream, "down", 40))
    query = _stateful(endpoint, stream, checkpoint, sink)
    try:
        wanted = Counter(shard for shard, _ in put.values())
        before = max(_commits(checkpoint))
        eventually(lambda: query.check() or max(_commits(checkpoint)) >= before + 2, 180, "two more committed batches")
    finally:
        query.stop()

    # Then every shard's count is exactly its records' count: none lost, none counted twice across the restart
    assert _counts(sink) == wanted
    assert sum(wanted.values()) == 120


def test_given_too_many_shuffle_partitions_for_local_4_when_the_stateful_query_starts_then_it_fails_saying_what_to_do(
    kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given the stateful query with 2 shuffle partitions per stage on local[4]: 1 Kinesis task + 2 + 2 > 4 slots
    stream = new_stream(4)
    _put(kinesis, stream, "r", 8)
    checkpoint, sink = _dirs(tmp_path)
    query = _stateful(endpoint, stream, checkpoint, sink, "spark.sql.shuffle.partitions=2")

    # When its first batch is planned, then it fails at start with the numbers and the settings to change
    status = query.ended(180)
    out = query.output()
    assert status == 1, out[-6000:]
    assert "needs 5 task slots at once, but the cluster has 4" in out, out[-6000:]
    for setting in ("spark.sql.shuffle.partitions", "kinesis.realTime.maxTasks", "spark.task.cpus"):
        assert setting in out
    assert not _lines(sink)


def _putting(kinesis: Any, stream: str, into: Dict[str, Tuple[str, str]], stop: threading.Event) -> threading.Thread:
    """Puts 10 records about every 200 ms until ``stop``, recording each one's position in ``into``."""

    def run() -> None:
        batch = 0
        while not stop.wait(0.2):
            into.update(_put(kinesis, stream, f"live{batch}", 10))
            batch += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_given_async_progress_tracking_when_the_query_is_sigkilled_while_records_arrive_then_each_is_written(
    kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given a stateless real-time query with asynchronous progress tracking over a 4-shard stream, records arriving
    stream = new_stream(4)
    checkpoint, sink = _dirs(tmp_path)
    put = _put(kinesis, stream, "before", 40)
    query: Optional[Query] = Query("async", endpoint, stream, checkpoint, sink)
    assert query.execution == "AsyncProgressTrackingMicroBatchExecution"
    stop = threading.Event()
    putter = _putting(kinesis, stream, put, stop)
    try:
        # When it is SIGKILLed after a committed batch, while records arrive, and started again on its checkpoint
        eventually(lambda: query.check() or len(_commits(checkpoint)) >= 2, 180, "two committed batches")
        query.kill()
        query = None
        query = Query("async", endpoint, stream, checkpoint, sink)
        before = max(_commits(checkpoint), default=-1)
        eventually(
            lambda: query.check() or max(_commits(checkpoint), default=-1) > before, 180, "a batch after restart"
        )
        stop.set()
        putter.join(30)
        eventually(lambda: query.check() or set(put) <= {line[2] for line in _lines(sink)}, 180, f"{len(put)} records")
    finally:
        stop.set()
        if query is not None:
            query.stop()

    # Then every record is written at the position Kinesis gave it, and nothing else (a replay after the kill may
    # write a record twice: the sink is idempotent by position)
    written = {(shard, sequence): payload for shard, sequence, payload in _lines(sink)}
    assert written == {position: payload for payload, position in put.items()}


def test_given_a_task_retried_within_its_batch_when_a_real_time_query_reads_then_each_record_is_written_at_its_position(
    kinesis: Any, endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> None:
    # Given a stateless real-time query on local[4,2] that fails the first attempt of partition 0 once, at its second
    # row, before the sink asks to commit (realtime_query.py says why not in the sink)
    stream = new_stream(4)
    checkpoint, sink = _dirs(tmp_path)
    put = _put(kinesis, stream, "before", 40)
    query = Query("retry", endpoint, stream, checkpoint, sink, "spark.master=local[4,2]")
    try:
        # When records arrive while its batches run
        eventually(lambda: query.check() or list(sink.glob("opened-0-*-1")), 180, "the task's second attempt")
        put.update(_put(kinesis, stream, "after", 40))
        eventually(lambda: query.check() or set(put) <= {line[2] for line in _lines(sink)}, 180, f"{len(put)} records")
    finally:
        query.stop()

    # Then Spark ran the task again within its batch rather than failing the query, and every record is written at
    # the position Kinesis gave it, and nothing else (the failed attempt's rows come again: the sink is idempotent)
    assert list(sink.glob("opened-0-*-1")), sorted(p.name for p in sink.glob("opened-*"))
    written = {(shard, sequence): payload for shard, sequence, payload in _lines(sink)}
    assert written == {position: payload for payload, position in put.items()}
