"""The pieces of a cluster fault run: a persistent emulator that can be restarted, a producer, the driver process,
a TCP relay that drops fan-out subscriptions and holds writers off during a restart, and readers of what the stream
and the sinks hold."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Counter, Dict, List, Optional, Sequence, Set, Tuple

import boto3
from botocore.config import Config

from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY, KinesisMock

Record = Tuple[str, str, int]  # (shard, sequence number, subsequence number)


def wait_for(condition: Callable[[], Any], timeout: float, what: str, every: float = 0.1) -> Any:
    """Polls ``condition`` every ``every`` s until it returns something truthy; raises after ``timeout`` s saying
    ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def kinesis_client(endpoint: str, attempts: int = 1) -> Any:
    """A boto3 Kinesis client of the emulator; ``attempts`` > 1 retries what botocore deems passing (the producer
    retries on its own, so that a failed call is seen; set-up and resharding calls should just get through)."""
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_KEY,
        verify=False,
        config=Config(retries={"total_max_attempts": attempts, "mode": "standard"}, connect_timeout=2, read_timeout=10),
    )


class PersistentEmulator:
    """kinesis-mock persisting its streams every 500 ms under ``folder``; :meth:`restart` kills it (SIGKILL) once
    everything it acknowledged is persisted and starts it again on the same ports with that data."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        os.environ.update(
            SHOULD_PERSIST_DATA="true", PERSIST_PATH=str(self.data), PERSIST_INTERVAL="500ms",
            PERSIST_FILE_NAME="streams.json",
        )  # fmt: skip
        self.mock = KinesisMock(home=None)
        self.restarts = 0

    def start(self) -> "PersistentEmulator":
        self.mock.start()
        return self

    def persisted(self) -> Set[Tuple[str, str, str]]:
        """Every record in the persisted file as (stream, shard, sequence number); none while it is missing or half
        written."""
        try:
            streams = json.loads((self.data / "streams.json").read_text())["streams"]
        except (OSError, ValueError, KeyError):
            return set()
        return {
            (arn.rsplit("/", 1)[-1], json.loads(shard)["ShardId"], r["SequenceNumber"])
            for arn, stream in streams.items()
            for shard, records in stream["shards"].items()
            for r in records
        }

    def held(self) -> Set[Tuple[str, str, str]]:
        """Every record the running emulator holds, in every stream, as (stream, shard, sequence number)."""
        client = kinesis_client(self.mock.endpoint, attempts=10)
        names = client.list_streams()["StreamNames"]
        return {(name, shard, seq) for name in names for shard, seq, _ in stream_records(self.mock.endpoint, name)[0]}

    def restart(self, fronts: Sequence["TcpRelay"] = ()) -> None:
        """Kills and restarts the emulator without losing a record it acknowledged, as AWS never does: the caller has
        paused its own writers; every connection through ``fronts`` (the relays other writers, such as the Kinesis
        sink, reach it through) is reset and new ones refused, so that no answer reaches a writer from here on; then
        the kill waits until the persisted file holds every record the emulator holds. A put it applies after the
        reset is unacknowledged, and its writer retries it."""
        try:
            for front in fronts:
                front.hold()
            acknowledged = self.held()
            wait_for(lambda: acknowledged <= self.persisted(), 30, "the emulator to persist every record it holds")
            process = self.mock.process
            assert process is not None
            process.kill()
            process.wait(10)
            self.mock.process = None
            self.mock.start()
            self.restarts += 1
        finally:  # release() is harmless on a front that was never held
            for front in fronts:
                front.release()

    def stop(self) -> None:
        if self.mock.process is not None:
            self.mock.process.kill()
            self.mock.process.wait(10)
            self.mock.process = None


class Producer:
    """Puts numbered records into a stream at a steady pace from a thread; :meth:`pause` holds it between calls.
    A failed call is retried (the emulator may be restarting); what the stream holds is read back at the end."""

    def __init__(self, endpoint: str, stream: str, per_second: int = 20) -> None:
        self.client = kinesis_client(endpoint)
        self.stream = stream
        self.per_second = per_second
        self.sent = 0
        self.failures = 0
        self._run = threading.Event()
        self._run.set()
        self._idle = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="producer", daemon=True)

    def start(self) -> "Producer":
        self._thread.start()
        return self

    def pause(self) -> None:
        """Holds the producer after its current call."""
        self._run.clear()
        wait_for(self._idle.is_set, 30, "the producer to pause")

    def resume(self) -> None:
        self._run.set()

    def stop(self) -> None:
        self._stop = True
        self._run.set()
        self._thread.join(30)

    def _loop(self) -> None:
        batch = max(1, self.per_second // 5)
        while not self._stop:
            if not self._run.is_set():
                self._idle.set()
                self._run.wait()
                self._idle.clear()
                continue
            started = time.monotonic()
            records = [
                {"Data": json.dumps({"id": self.sent + i}).encode(), "PartitionKey": f"k{(self.sent + i) % 16}"}
                for i in range(batch)
            ]
            try:
                self.client.put_records(StreamName=self.stream, Records=records)
                self.sent += batch
            except Exception:  # the emulator is restarting: try again (any duplicate is read back and counted)
                self.failures += 1
            time.sleep(max(0.0, 0.2 - (time.monotonic() - started)))  # pacing, not synchronisation


def stream_records(endpoint: str, stream: str) -> Tuple[Counter[Record], Dict[Record, bytes]]:
    """Every record the stream holds, read with a plain client from the trim horizon of every shard."""
    client = kinesis_client(endpoint, attempts=10)
    shards, token = [], None
    while True:
        page = client.list_shards(NextToken=token) if token else client.list_shards(StreamName=stream)
        shards += page["Shards"]
        token = page.get("NextToken")
        if not token:
            break
    got: Counter[Record] = collections.Counter()
    data: Dict[Record, bytes] = {}
    for shard in shards:
        iterator = client.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            page = client.get_records(ShardIterator=iterator, Limit=10000)
            for r in page["Records"]:
                key = (shard["ShardId"], r["SequenceNumber"], 0)
                got[key] += 1
                data[key] = r["Data"]
            iterator = page.get("NextShardIterator")
            if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                break
    return got, data


class FileSinkOutput:
    """The rows a file sink committed: the files its ``_spark_metadata`` log lists (each log entry and file parsed
    once: neither changes once written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rows: Dict[str, List[Dict[str, Any]]] = {}
        self._entries: Dict[str, List[Dict[str, Any]]] = {}

    def committed_files(self) -> Set[str]:
        log = self.path / "_spark_metadata"
        if not log.is_dir():
            return set()
        entries = sorted(
            (int(p.name.split(".")[0]), p) for p in log.iterdir() if p.name.split(".")[0].isdigit()
        )  # fmt: skip
        compacts = [i for i, p in entries if p.name.endswith(".compact")]
        first = compacts[-1] if compacts else -1
        files: Set[str] = set()
        for batch, p in entries:
            if batch >= first:
                if p.name not in self._entries:
                    self._entries[p.name] = [json.loads(line) for line in p.read_text().splitlines()[1:]]
                for entry in self._entries[p.name]:
                    (files.add if entry["action"] == "add" else files.discard)(entry["path"])
        return files

    def batch_of_files(self) -> Dict[str, int]:
        """Each committed file with the batch whose log entry added it (a compact entry does not say which batch
        added a file: the cluster runs never compact the log)."""
        self.committed_files()
        return {
            entry["path"]: int(name.split(".")[0])
            for name, entries in self._entries.items()
            if not name.endswith(".compact")
            for entry in entries
            if entry["action"] == "add"
        }

    def rows_by_file(self) -> Dict[str, List[Dict[str, Any]]]:
        files = self.committed_files()
        for f in files:
            if f not in self._rows:
                local = f[len("file:") :] if f.startswith("file:") else f
                self._rows[f] = [json.loads(line) for line in Path(local).read_text().splitlines() if line]
        return {f: self._rows[f] for f in files}

    def rows(self) -> List[Dict[str, Any]]:
        return [row for rows in self.rows_by_file().values() for row in rows]

    def records(self) -> Counter[Record]:
        return collections.Counter(
            (r["shardId"], r["sequenceNumber"], int(r["subSequenceNumber"])) for r in self.rows()
        )


class DriverProcess:
    """One run of ``cluster_driver.py`` in a session of its own, so that SIGKILL reaches the driver and its
    executors at once."""

    def __init__(self, python: str, config: Dict[str, Any], folder: Path, attempt: int) -> None:
        self.control = folder / f"control-{attempt}"
        self.control.mkdir(parents=True)
        self.config = dict(config, controlDir=str(self.control))
        config_file = self.control / "config.json"
        config_file.write_text(json.dumps(self.config))
        self.log = folder / f"driver-{attempt}.log"
        driver = Path(__file__).resolve().parent / "cluster_driver.py"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [python, str(driver), str(config_file)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.kills = 0

    def await_ready(self, timeout: float = 300) -> None:
        wait_for(lambda: (self.control / "ready").exists() or self.exited(), timeout, "the driver to start its query")
        if self.exited():
            raise AssertionError(f"the driver exited during start-up ({self.process.returncode}):\n{self.tail()}")

    def status(self) -> Dict[str, Any]:
        try:
            return dict(json.loads((self.control / "status.json").read_text()))
        except (OSError, ValueError):
            return {}

    def exited(self) -> bool:
        return self.process.poll() is not None

    def failure(self) -> Optional[str]:
        """Why the query failed, or None while it has not."""
        failed = self.control / "failed"
        if failed.exists():
            return failed.read_text()
        if self.exited() and self.process.returncode != 0:
            return f"the driver exited with {self.process.returncode}:\n{self.tail()}"
        return None

    def kill_executor(self) -> Dict[str, Any]:
        self.kills += 1
        name = f"kill-executor-{self.kills}"
        (self.control / name).write_text("")
        done = self.control / f"done-{name}"
        wait_for(lambda: done.exists() or self.exited(), 60, "the driver to kill an executor")
        return dict(json.loads(done.read_text()))

    def sigkill(self, mid_batch_wait: float = 20) -> bool:
        """SIGKILLs the driver and its executors, as soon as a task runs (at most ``mid_batch_wait`` s from now);
        returns whether a task was running."""
        deadline = time.monotonic() + mid_batch_wait
        while self.status().get("activeTasks", 0) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        mid_batch = self.status().get("activeTasks", 0) > 0
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)
        return mid_batch

    def stop(self, timeout: float = 90) -> None:
        """Stops the query cleanly and waits for the driver to exit."""
        (self.control / "stop").write_text("")
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            raise AssertionError(f"the driver did not stop within {timeout} s:\n{self.tail()}") from None

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


class TcpRelay:
    """A loopback TCP relay (TLS and HTTP/2 pass through untouched) whose :meth:`drop_all` resets every open
    connection: to fan-out, every subscription drops at once. :meth:`hold` also refuses new connections until
    :meth:`release`."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self._loop = asyncio.new_event_loop()
        self._writers: Set[asyncio.StreamWriter] = set()
        self._server: Optional[asyncio.AbstractServer] = None
        self._held = False
        self.drops = 0
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._thread = threading.Thread(target=self._loop.run_forever, name="tcp-relay", daemon=True)

    def start(self) -> "TcpRelay":
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True), self._loop
        ).result(10)
        return self

    def drop_all(self) -> int:
        async def drop() -> int:
            writers = list(self._writers)
            for w in writers:
                reset(w)
            return len(writers)

        dropped = asyncio.run_coroutine_threadsafe(drop(), self._loop).result(10)
        self.drops += 1
        return dropped

    def hold(self) -> None:
        """Resets every open connection and refuses new ones (each is reset as soon as it is accepted)."""
        self._loop.call_soon_threadsafe(setattr, self, "_held", True)
        self.drop_all()

    def release(self) -> None:
        self._loop.call_soon_threadsafe(setattr, self, "_held", False)

    def stop(self) -> None:
        """Closes the listener and every relayed connection, then the loop, which has no task left when it closes."""

        async def close() -> None:
            if self._server is not None:
                self._server.close()
            pumps = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._held:
            reset(writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        if self._held:  # held while this connection was being opened
            reset(writer)
            reset(up_writer)
            return
        self._writers.update((writer, up_writer))

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while True:
                    chunk = await src.read(65536)
                    if not chunk:
                        break
                    dst.write(chunk)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        self._writers.difference_update((writer, up_writer))


def reset(writer: asyncio.StreamWriter) -> None:
    """Closes a connection with a reset (linger 0), as a crashed server's would end, not with an orderly close."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    writer.transport.abort()


def python_of_this_venv() -> str:
    return sys.executable
