"""A Spark standalone cluster on this machine: a master and workers started with the ``spark-class`` of the installed
pyspark (a Spark distribution: its bin/ and jars/), each worker on a loopback address of its own.

Own addresses matter: Spark never starts a speculative copy of a task on the host where an attempt of it runs, so on
one host (``local-cluster``) speculation never happens. With workers on 127.0.0.2 and 127.0.0.3 it sees two hosts.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import List, Optional


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class StandaloneCluster:
    """A master on 127.0.0.1 and ``workers`` workers of one core and ``memory`` each, on 127.0.0.2, 127.0.0.3, ...;
    a context manager that stops them (and so their executors) on exit. :attr:`url` is the master's URL."""

    def __init__(self, folder: Path, workers: int = 2, memory: str = "1g", start_timeout: float = 300.0) -> None:
        import pyspark

        self.spark_home = Path(pyspark.__file__).resolve().parent
        self.folder = folder
        self.workers = workers
        self.memory = memory
        self.start_timeout = start_timeout
        self.port = free_port()
        self.ui_port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.processes: List[subprocess.Popen[bytes]] = []

    def _launch(self, name: str, host: str, args: List[str]) -> None:
        env = dict(os.environ, SPARK_HOME=str(self.spark_home), SPARK_LOCAL_IP=host, SPARK_LOG_DIR=str(self.folder))
        log = open(self.folder / f"{name}.log", "wb")
        self.processes.append(
            subprocess.Popen(
                [str(self.spark_home / "bin" / "spark-class"), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # so that stopping it reaches the JVM under the launcher script
            )
        )

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as answer:
                state = json.load(answer)
        except (OSError, ValueError):
            return 0
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def start(self) -> "StandaloneCluster":
        self.folder.mkdir(parents=True, exist_ok=True)
        master = "org.apache.spark.deploy.master.Master"
        self._launch("master", "127.0.0.1", [master, "--host", "127.0.0.1", "--port", str(self.port),
                                             "--webui-port", str(self.ui_port)])  # fmt: skip
        for i in range(self.workers):
            host = f"127.0.0.{i + 2}"
            self._launch(f"worker-{i + 1}", host, [
                "org.apache.spark.deploy.worker.Worker", "--host", host, "--cores", "1", "--memory", self.memory,
                "--webui-port", str(free_port()), "--work-dir", str(self.folder / f"work-{i + 1}"), self.url,
            ])  # fmt: skip
        deadline = time.monotonic() + self.start_timeout
        while self.alive_workers() < self.workers:
            exited = [p for p in self.processes if p.poll() is not None]
            if exited or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the standalone cluster did not start (logs in {self.folder})")
            time.sleep(0.2)
        return self

    def stop(self) -> None:
        """SIGTERM (a worker kills its executors on the way out), a bounded wait, then SIGKILL."""
        for p in reversed(self.processes):
            self._signal(p, signal.SIGTERM)
        for p in self.processes:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                self._signal(p, signal.SIGKILL)
                p.wait(10)
        self.processes = []

    @staticmethod
    def _signal(p: "subprocess.Popen[bytes]", number: int) -> None:
        try:
            os.killpg(p.pid, number)
        except ProcessLookupError:
            pass

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *_: Optional[object]) -> None:
        self.stop()
