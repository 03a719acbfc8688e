"""Shared fixtures: one local Spark session with the connector attached by the package, and one emulator.

The tests import the installed wheel, never the source tree: run-tests.sh installs the wheel into a fresh
virtual environment and runs pytest from a folder outside python/src. The package is imported where a fixture
needs it, so tests of the repository's files (test_docs_links.py) run without a built wheel or pyspark.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, List, Tuple

import pytest


def pytest_report_header(config: Any) -> str:
    try:
        import pyspark

        import pyspark_kinesis
    except ImportError as missing:
        return f"{missing.name} is not installed: only tests that need neither pyspark nor the wheel can pass"
    return (
        f"pyspark {pyspark.__version__}, pyspark-kinesis {pyspark_kinesis.__version__} from {pyspark_kinesis.__file__}"
    )


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    import pyspark_kinesis

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("pyspark-kinesis tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    session = pyspark_kinesis.configure_spark_with_kinesis(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def emulator() -> Iterator[Tuple[str, str]]:
    """The plain and TLS endpoints of the emulator bin/test started (KINESIS_MOCK_ENDPOINT, and
    KINESIS_MOCK_TLS_ENDPOINT or else KINESIS_MOCK_TLS_PORT as kinesis-mock.sh uses it), or of one started here
    through the package."""
    from pyspark_kinesis._emulator import KinesisMock

    given = os.environ.get("KINESIS_MOCK_ENDPOINT")
    if given:
        tls_port = os.environ.get("KINESIS_MOCK_TLS_PORT", "4567")
        yield given, os.environ.get("KINESIS_MOCK_TLS_ENDPOINT", f"https://127.0.0.1:{tls_port}")
        return
    started = KinesisMock()
    with started:
        yield started.endpoint, started.tls_endpoint


@pytest.fixture(scope="session")
def endpoint(emulator: Tuple[str, str]) -> str:
    """The emulator's plain HTTP endpoint, for boto3 and the source."""
    return emulator[0]


@pytest.fixture(scope="session")
def tls_endpoint(emulator: Tuple[str, str]) -> str:
    """The emulator's HTTPS endpoint (self-signed certificate), for the sink's Kinesis Producer Library."""
    return emulator[1]


@pytest.fixture(scope="session")
def moto() -> Iterator[str]:
    """moto's server (S3, Glue): the one bin/test started (MOTO_ENDPOINT), or one started here by its script."""
    yield from emulator_script("MOTO_ENDPOINT", "moto.sh")


@pytest.fixture(scope="session")
def kinesis(endpoint: str) -> Any:
    import boto3

    from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY

    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_KEY,
    )


@pytest.fixture
def new_stream(kinesis: Any) -> Callable[[int], str]:
    """Creates a stream with a unique name and the given shard count, and waits until it is active."""

    def create(shards: int = 1) -> str:
        name = f"py-{uuid.uuid4().hex[:12]}"
        kinesis.create_stream(StreamName=name, ShardCount=shards)
        kinesis.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})
        return name

    return create


def eventually(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Polls ``condition`` until it returns something truthy; fails after ``timeout`` seconds saying ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.25)


def emulator_script(variable: str, script: str) -> Iterator[str]:
    """For a fixture: the endpoint in environment variable ``variable`` (one bin/test started), or that of an
    emulator started here by integration-tests/scripts/``script`` and stopped after."""
    given = os.environ.get(variable)
    if given:
        yield given
        return
    path = Path(__file__).resolve().parents[2] / "integration-tests" / "scripts" / script
    out = subprocess.run([str(path), "start"], capture_output=True, text=True, check=True)
    try:
        yield out.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run([str(path), "stop"], capture_output=True)


def memory_rows(spark: Any, rows: Any, checkpoint: Any, expected: int, timeout: float = 120) -> List[Any]:
    """Runs the streaming DataFrame ``rows`` into a new memory table (every 500 ms) until the table holds
    ``expected`` rows, then stops it; the table's rows."""
    table = f"rows_{uuid.uuid4().hex[:8]}"
    query = (
        rows.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        return eventually(
            lambda: (lambda r: r if len(r) >= expected else None)(spark.table(table).collect()),
            timeout,
            f"{expected} rows in {table} (query status: {query.status})",
        )
    finally:
        query.stop()
