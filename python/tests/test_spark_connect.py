"""Spark Connect against kinesis-mock: a local server started by pyspark with configure_spark_with_kinesis, and
standalone servers started with pyspark's own sbin/start-connect-server.sh, one with --jars and one that gets the
connector only as session artifacts through attach_kinesis. Each client runs in a process of its own
(connect_client.py): a Connect session switches its whole Python process to Spark Connect."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pyspark
import pytest

from pyspark_kinesis import jar_path
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY
from pyspark_kinesis._spark import SQL_EXTENSIONS

CLIENT = Path(__file__).resolve().parent / "connect_client.py"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 120
CLIENT_TIMEOUT_S = 300

pytestmark = pytest.mark.skipif(
    int(pyspark.__version__.split(".")[0]) < 4, reason="the Spark Connect tests run on the pyspark 4 line"
)


class ConnectServer:
    """A Spark Connect server started by pyspark's sbin/start-connect-server.sh on a free loopback port, with its pid
    file and log in a folder of its own, so that stopping it stops this one only."""

    def __init__(self, folder: Path, jars: Optional[str], extensions: Optional[str] = None) -> None:
        self.folder = folder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"sc://127.0.0.1:{self.port}"
        spark_home = Path(pyspark.__file__).parent
        self.env = dict(
            os.environ,
            SPARK_HOME=str(spark_home),
            SPARK_LOG_DIR=str(folder),
            SPARK_PID_DIR=str(folder),
            SPARK_IDENT_STRING=f"kinesis-test-{self.port}",
        )
        self.env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        conf = {
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
        }
        args = ["--master", "local[2]"] + [a for k, v in conf.items() for a in ("--conf", f"{k}={v}")]
        args += ["--jars", jars] if jars else []
        args += ["--conf", f"spark.sql.extensions={extensions}"] if extensions else []
        self.sbin = spark_home / "sbin"
        subprocess.run([str(self.sbin / "start-connect-server.sh"), *args], env=self.env, check=True)

    @property
    def log(self) -> str:
        return "".join(p.read_text(errors="replace") for p in self.folder.glob("*.out"))

    def pid(self) -> Optional[int]:
        files = list(self.folder.glob("*.pid"))
        return int(files[0].read_text().strip()) if files else None

    def wait_until_serving(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            pid = self.pid()
            if pid is not None and not _alive(pid):
                pytest.fail(f"the Spark Connect server on port {self.port} exited; its log:\n{self.log[-4000:]}")
            time.sleep(0.5)
        pytest.fail(f"the Spark Connect server took over {START_TIMEOUT_S} s to serve; its log:\n{self.log[-4000:]}")

    def stop(self) -> None:
        pid = self.pid()
        subprocess.run([str(self.sbin / "stop-connect-server.sh")], env=self.env, timeout=60)
        deadline = time.monotonic() + 20
        while pid is not None and _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.25)
        if pid is not None and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def servers(tmp_path_factory: Any) -> Iterator[Dict[str, ConnectServer]]:
    """Two servers started side by side: "jars" with the connector on --jars and its SQL extension, "bare" without
    either."""
    started: Dict[str, ConnectServer] = {}
    try:
        for name, jars, extensions in (("jars", jar_path(), SQL_EXTENSIONS), ("bare", None, None)):
            started[name] = ConnectServer(tmp_path_factory.mktemp(f"connect-{name}"), jars, extensions)
        for server in started.values():
            server.wait_until_serving()
        yield started
    finally:
        for server in started.values():
            server.stop()


def run_client(remote: str, how: str, checkpoints: Path, **args: Any) -> Dict[str, Any]:
    """Runs connect_client.py against ``remote``; its result, or the test fails with its output."""
    given = dict(
        remote=remote, how=how, region=REGION, key=ACCESS_KEY_ID, secret=SECRET_KEY, checkpoints=str(checkpoints)
    )
    given.update(args)
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
    if remote.startswith("local"):
        # pyspark's local server listens on 15002, which another server on the machine may hold, unless testing:
        # then it takes a free port and the client asks the server which.
        env["SPARK_TESTING"] = "1"
    done = subprocess.run(
        [sys.executable, str(CLIENT), json.dumps(given)],
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
        env=env,
        cwd=str(checkpoints),
    )
    if done.returncode != 0:
        told = "\n".join(line for line in done.stderr.splitlines() if not line.lstrip().startswith("at "))
        pytest.fail(f"the Spark Connect client failed (exit {done.returncode}):\n{told[-6000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def put(kinesis: Any, stream: str, n: int) -> List[Tuple[str, str]]:
    records = [(f"key-{i % 13}", f"{stream}-{i}") for i in range(n)]
    answer = kinesis.put_records(
        StreamName=stream, Records=[{"PartitionKey": k, "Data": d.encode()} for k, d in records]
    )
    assert answer.get("FailedRecordCount", 0) == 0, answer
    return records


def exact(got: List[List[str]], expected: List[Tuple[str, str]]) -> None:
    have, want = Counter(map(tuple, got)), Counter(expected)
    assert have == want, f"{sum(have.values())} rows for {len(expected)}; extra {have - want}, missing {want - have}"


@pytest.fixture
def read_and_write_exactly(
    kinesis: Any, endpoint: str, tls_endpoint: str, new_stream: Callable[[int], str], tmp_path: Path
) -> Callable[[str, str], Dict[str, Any]]:
    """Runs a client against a server (``remote``, ``how`` the connector reaches it): a streaming read, a streaming
    write, a batch write and batch reads, each checked exact; gives the client's result."""

    def run(remote: str, how: str) -> Dict[str, Any]:
        source, copy, batch = new_stream(2), new_stream(1), new_stream(1)
        records = put(kinesis, source, 200)
        batch_rows = [(f"b-{i % 7}", f"batch-{i}") for i in range(150)]
        result = run_client(
            remote,
            how,
            tmp_path,
            endpoint=endpoint,
            tls_endpoint=tls_endpoint,
            source=source,
            copy=copy,
            batch=batch,
            rows=batch_rows,
        )
        exact(result["stream_read"], records)
        exact(result["copy_read"], records)
        exact(result["batch_read"], batch_rows)
        return result

    return run


def test_given_a_local_connect_server_from_configure_spark_with_kinesis_then_reads_and_writes_are_exact(
    read_and_write_exactly: Callable[[str, str], Dict[str, Any]],
) -> None:
    # Given remote("local[2]") configured with configure_spark_with_kinesis, whose local server gets spark.jars
    # When a client reads a stream and copies it with streaming queries, writes rows in a batch and reads them back
    result = read_and_write_exactly("local[2]", "configure")
    # Then every read is exact, and the read query's progress carries the source's metrics
    assert sum(int(m.get("recordsRead", "0")) for m in result["progress_metrics"]) == 200
    # And the server has the payload functions: configure_spark_with_kinesis set the connector's SQL extension
    assert result["payload_function_error"] == ""


def test_given_a_server_started_with_jars_then_reads_and_writes_are_exact(
    servers: Dict[str, ConnectServer], read_and_write_exactly: Callable[[str, str], Dict[str, Any]]
) -> None:
    # Given a standalone server started with --jars, and a client that adds nothing
    server = servers["jars"]
    # When it reads, copies, writes and reads back
    result = read_and_write_exactly(server.url, "server")
    # Then every read is exact, the progress has the source's metrics, and Spark loaded every class it needed
    assert sum(int(m.get("recordsRead", "0")) for m in result["progress_metrics"]) == 200
    assert "ClassNotFound" not in server.log
    assert "added to this Spark Connect session as artifacts" not in server.log


def test_given_a_server_without_the_connector_when_attached_as_artifacts_then_reads_and_writes_are_exact(
    servers: Dict[str, ConnectServer], read_and_write_exactly: Callable[[str, str], Dict[str, Any]]
) -> None:
    # Given a standalone server without the connector, and a client that adds it with attach_kinesis (twice)
    server = servers["bare"]
    # When it reads, copies, writes and reads back
    result = read_and_write_exactly(server.url, "attach")
    # Then every read and write is exact and the progress has every source metric (the connector computes them)
    metrics = result["progress_metrics"]
    # And a payload function, whose SQL function such a server lacks, says how to start the server to have it
    assert f"--conf spark.sql.extensions={SQL_EXTENSIONS}" in result["payload_function_error"]
    assert sum(int(m.get("recordsRead", "0")) for m in metrics) == 200
    assert {"getRecordsCalls", "throttledCalls", "bytesRead", "avgMsBehindLatest"} <= set().union(*metrics)
    # And the task metrics Spark's SQL tab would load by class name were left out with one warning, not a failure
    assert server.log.count("added to this Spark Connect session as artifacts") == 1, server.log[-4000:]
    assert "ClassNotFound" not in server.log


def test_given_two_sessions_with_different_credentials_then_each_reads_and_writes_its_own_account(
    servers: Dict[str, ConnectServer], tls_endpoint: str, endpoint: str, tmp_path: Path
) -> None:
    # Given one server whose JVM shares the connector's clients across sessions (--jars), and a stream of one name in
    # two kinesis-mock accounts (an access key id of 12 digits picks the account)
    import boto3

    server, stream = servers["jars"], f"py-{uuid.uuid4().hex[:12]}"
    keys = ["111111111111", "222222222222"]
    for key in keys:
        client = boto3.client(
            "kinesis", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=key, aws_secret_access_key="s"
        )
        client.create_stream(StreamName=stream, ShardCount=1)
        client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})

    # When two client sessions, each with its own static keys, write to and read the stream of that name at once
    def session(key: str) -> Dict[str, Any]:
        rows = [(f"k-{i % 3}", f"{key}-{i}") for i in range(40)]
        folder = tmp_path / key
        folder.mkdir()
        got = run_client(
            server.url, "server", folder, endpoint=endpoint, tls_endpoint=tls_endpoint, batch=stream, rows=rows, key=key
        )
        return {"got": got["batch_read"], "rows": rows}

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(session, keys))

    # Then each session read back exactly its own rows: neither used a client, or credentials, of the other
    for result in results:
        exact(result["got"], result["rows"])


def test_given_a_server_with_the_sql_extension_then_every_payload_function_decodes_from_python_and_sql(
    servers: Dict[str, ConnectServer], moto: str, tmp_path: Path
) -> None:
    import base64
    import gzip

    import boto3
    from test_payloads import _DATA_MESSAGE, _change

    # Given a server started with --jars and the connector's SQL extension, a registry at moto, and payloads in the
    # formats AWS writes: a gzip-compressed CloudWatch Logs subscription record and a DynamoDB change record
    registry = f"connect-{uuid.uuid4().hex[:8]}"
    boto3.client(
        "glue", endpoint_url=moto, region_name=REGION, aws_access_key_id="test", aws_secret_access_key="test"
    ).create_registry(RegistryName=registry)
    logs = json.dumps(_DATA_MESSAGE)
    payloads = {
        "logs": base64.b64encode(gzip.compress(logs.encode())).decode(),
        "change": base64.b64encode(_change("INSERT", "NewImage", "3", 1764201600123456)).decode(),
        "registry": registry,
        "glue_options": {
            "kinesis.region": REGION,
            "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
            "kinesis.awsSecretKey": SECRET_KEY,
            "kinesis.glue.endpointUrl": moto,
        },
    }

    # When a Connect client calls each payload function, from Python and in SQL
    result = run_client(servers["jars"].url, "server", tmp_path, payloads=payloads)

    # Then each decodes as on a classic session
    assert result["payload_function_error"] == ""
    decoded = result["payloads"]
    assert decoded["log_events"] == decoded["sql_log_events"] == ["START", "END"]
    assert decoded["change"] == ["INSERT", "order#1", 3]
    assert decoded["decompressed"] == logs
    assert decoded["orders"] == sorted([f"o-{i}", i] for i in range(5))
    assert decoded["sql_orders"] == sorted(f"o-{i}" for i in range(5))
