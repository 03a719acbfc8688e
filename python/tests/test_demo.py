"""The main job, end to end for a few seconds, and its messages when a prerequisite is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def run_demo(*args: str, env: "dict[str, str] | None" = None, timeout: float = 300) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "pyspark_kinesis.demo", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_given_a_fresh_run_when_it_ends_then_it_printed_running_totals_and_stopped_everything() -> None:
    # Given/When the demo runs for a few seconds against its own emulator
    done = run_demo("--seconds", "25", "--trigger-seconds", "1")
    out = done.stdout
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{out[-4000:]}\nstderr:\n{done.stderr[-4000:]}"

    # Then it created the stream, printed batches with counts per event type, and stopped the emulator
    assert "Created stream demo-events with 2 shards" in out
    assert re.search(r"\|eventType\s*\|events\s*\|amount", out), out[-3000:]
    counts = [int(n) for n in re.findall(r"\|(?:click|view|purchase|signup)\s*\|(\d+)\s*\|", out)]
    assert counts and max(counts) > 0, out[-3000:]
    assert re.search(r"Stopped after \d+ micro-batches, \d+ events produced\.", out)
    pid = int(re.search(r"kinesis-mock is running at http://127\.0\.0\.1:\d+ \(pid (\d+)\)", out).group(1))
    assert "kinesis-mock stopped." in out
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in open(f"/proc/{pid}/status").read().lower()


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
