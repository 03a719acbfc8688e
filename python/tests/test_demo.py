"""The main job, end to end for a few seconds, and its messages when a prerequisite is missing."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from typing import Any, Callable

import pytest
from conftest import eventually

from pyspark_kinesis._emulator import KinesisMock
from pyspark_kinesis.demo import lag_line


def run_demo(
    *args: str, env: "dict[str, str] | None" = None, timeout: float = 300
) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "pyspark_kinesis.demo", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def run_demo_until(*args: str, seen: "Callable[[str], bool]", what: str) -> "tuple[int, str]":
    """Runs the demo until its output shows what ``seen`` looks for (a bounded wait, however busy the machine), then
    stops it with Ctrl-C; returns its exit status and output."""
    demo = subprocess.Popen(
        [sys.executable, "-m", "pyspark_kinesis.demo", "--seconds", "600", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: "list[str]" = []
    reader = threading.Thread(target=lambda: lines.extend(iter(demo.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        eventually(lambda: seen("".join(lines)), 240, what)
        demo.send_signal(signal.SIGINT)
        status = demo.wait(90)
    finally:
        if demo.poll() is None:
            demo.kill()
    reader.join(10)
    return status, "".join(lines)


def assert_stopped_cleanly(out: str) -> None:
    """The emulator the demo started is gone and the demo said so."""
    pid = int(re.search(r"kinesis-mock is running at http://127\.0\.0\.1:\d+ \(pid (\d+)\)", out).group(1))
    assert "kinesis-mock stopped." in out
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in open(f"/proc/{pid}/status").read().lower()


def event_counts(out: str) -> "list[int]":
    return [int(n) for n in re.findall(r"\|(?:click|view|purchase|signup)\s*\|(\d+)\s*\|", out)]


def test_given_a_duration_when_it_is_over_then_the_demo_printed_running_totals_and_stopped_everything() -> None:
    # Given/When the demo runs for a few seconds against its own emulator
    done = run_demo("--seconds", "12", "--trigger-seconds", "1")
    out = done.stdout
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{out[-4000:]}\nstderr:\n{done.stderr[-4000:]}"

    # Then it created the stream, streamed (the totals it prints: see the Ctrl-C test, which waits for them however
    # long Spark takes to start), stopped when the time was up, and stopped the emulator
    assert "Created stream demo-events with 2 shards" in out and "Streaming for 12 s" in out, out[-3000:]
    assert re.search(r"Stopped after \d+ micro-batches, \d+ events produced\.", out)
    assert_stopped_cleanly(out)
    # And it said where the Spark UI is, and nothing more: no warnings, no stack traces
    assert re.search(r"the Spark UI is at http://127\.0\.0\.1:\d+", out), out[-3000:]
    noise = [line for line in (out + done.stderr).splitlines() if re.search(r"\bWARN\b|Traceback|Exception", line)]
    assert not noise, "\n".join(noise[:20])


def test_given_a_running_emulator_when_the_demo_gets_its_endpoint_then_it_streams_from_it_and_leaves_it_up() -> None:
    # Given kinesis-mock already running, as LocalStack's Kinesis runs under docker compose
    with KinesisMock() as endpoint:
        # When the demo runs with --endpoint until it has printed totals
        status, out = run_demo_until(
            "--endpoint", endpoint, "--trigger-seconds", "1", seen=event_counts, what="a batch with counts"
        )
        assert status == 0, out[-4000:]

        # Then it used that emulator (started none), printed running totals, and left the emulator running
        assert f"Using the Kinesis emulator at {endpoint}" in out and "kinesis-mock is running" not in out
        assert "Created stream demo-events with 2 shards" in out
        assert event_counts(out) and max(event_counts(out)) > 0, out[-3000:]
        assert "kinesis-mock stopped." not in out

        # And a second run reuses the stream an emulator that keeps state (LocalStack) still has
        again = run_demo("--endpoint", endpoint, "--seconds", "5", "--trigger-seconds", "1")
        assert again.returncode == 0 and "Reusing stream demo-events" in again.stdout, again.stdout[-3000:]


def test_given_a_progress_with_lag_metrics_then_the_demo_reports_them_and_nothing_without() -> None:
    # Given progress reports as Spark's StreamingQuery.lastProgress returns them
    with_lag = {
        "batchId": 3,
        "sources": [
            {
                "description": "KinesisV2[demo-events]",
                "metrics": {"maxMsBehindLatest": "900", "avgMsBehindLatest": "250", "numShards": "2"},
            }
        ],
    }
    without = {"batchId": 3, "sources": [{"description": "KinesisV2[demo-events]", "metrics": {}}]}

    # Then the lag metrics are reported, in a stable order, and nothing when the source reports none
    assert lag_line(with_lag) == "Behind the stream's tip: avgMsBehindLatest 250, maxMsBehindLatest 900"
    assert lag_line(without) is None and lag_line({"batchId": 0, "sources": [{}]}) is None and lag_line(None) is None


def test_given_ctrl_c_while_streaming_then_the_demo_stops_cleanly_with_its_emulator() -> None:
    # Given the demo streaming with growing totals, when Ctrl-C arrives
    status, out = run_demo_until("--trigger-seconds", "1", seen=event_counts, what="a batch with counts from the demo")

    # Then it stops the query, Spark and the emulator, and exits 0
    assert status == 0, out[-4000:]
    assert "Stopping (Ctrl-C again to force)" in out
    assert re.search(r"Stopped after \d+ micro-batches, \d+ events produced\.", out), out[-3000:]
    assert "Traceback" not in out, out[-4000:]
    assert_stopped_cleanly(out)


def test_given_no_java_then_the_demo_says_how_to_install_it() -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = "/nonexistent"
    done = run_demo("--seconds", "1", env=env, timeout=60)
    assert done.returncode == 2
    assert "Java was not found" in done.stderr and "apt-get install openjdk-17-jdk-headless" in done.stderr


def test_given_no_node_then_the_demo_says_how_to_install_it(tmp_path: "os.PathLike[str]") -> None:
    env = dict(os.environ, PATH="/nonexistent", JAVA_HOME=str(tmp_path), PYSPARK_KINESIS_HOME=str(tmp_path))
    done = run_demo("--seconds", "1", env=env, timeout=60)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "'node' was not found" in done.stderr and "apt-get install nodejs npm" in done.stderr


def test_given_realtime_when_the_demo_runs_then_it_prints_each_batchs_producer_to_spark_latency() -> None:
    line = r"Real-time batch: (\d+) events, each from the producer to Spark in p50 (\d+) ms, p99 (\d+) ms"
    # Given/When the demo runs in real-time mode against its own emulator for three 5-second batches
    status, out = run_demo_until("--realtime", seen=lambda out: len(re.findall(line, out)) >= 3, what="3 batches")
    assert status == 0, out[-4000:]

    # Then it printed, batch by batch, how long events took from the producer to Spark, and stopped cleanly
    batches = re.findall(line, out)
    assert len(batches) >= 3, out[-3000:]
    assert all(0 <= int(p50) <= int(p99) for _, p50, p99 in batches)
    # the first batch also reads what was produced while Spark started; the next ones hand events over within
    # milliseconds, not at the batch's end (5 s)
    assert min(int(p50) for _, p50, _ in batches[1:]) < 1000, out[-3000:]
    assert re.search(r"Stopped after \d+ real-time batches, \d+ events produced\.", out), out[-3000:]
    assert_stopped_cleanly(out)


def test_given_a_pyspark_without_real_time_mode_then_realtime_says_which_to_use(monkeypatch: Any) -> None:
    import pyspark

    from pyspark_kinesis._demo_realtime import check_real_time_mode
    from pyspark_kinesis._emulator import PrerequisiteMissing

    monkeypatch.setattr(pyspark, "__version__", "3.5.9")
    expected = r"needs pyspark 4\.2 or newer.*PYSPARK_VERSION=4\.3\.0 bin/demo --realtime"
    with pytest.raises(PrerequisiteMissing, match=expected):
        check_real_time_mode()


def test_given_realtime_with_a_short_batch_or_an_aws_stream_then_the_demo_says_what_to_give() -> None:
    short = run_demo("--realtime", "--trigger-seconds", "2")
    assert short.returncode == 2 and "a real-time batch lasts at least 5 seconds" in short.stderr, short.stderr
    aws = run_demo("--realtime", "--stream", "orders")
    assert aws.returncode == 2 and "--realtime measures events the demo produces itself" in aws.stderr, aws.stderr
