"""The connector's Spark metrics sources where a cluster's operators read them: a query on the standalone cluster (an
executor JVM on each of two workers) copies a stream into another through the ``aws-kinesis`` sink, with Spark's own
configuration serving the driver's metrics at ``/metrics/prometheus`` and writing the executors' to CSV files.

Executors have no UI: their ``reads`` and ``writes`` sources reach operators only through a sink configured for the
executors (docs/monitoring.md). This test shows that, in JVMs other than the driver's, those sources register and
count each record once, as the driver's ``batches`` source does.
"""

from __future__ import annotations

import os
import re
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest
from cluster_driver import cluster_builder
from harness import kinesis_client, stream_records, wait_for
from standalone import StandaloneCluster, free_port

from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY, KinesisMock

RECORDS = 300
QUERY = "exec_metrics"
NAMESPACE = "execmetrics"
CREDENTIALS = {"kinesis.region": REGION, "kinesis.awsAccessKeyId": ACCESS_KEY_ID, "kinesis.awsSecretKey": SECRET_KEY}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Tuple[str, str]]:
    """The plain and TLS endpoints of the kinesis-mock bin/test started (KINESIS_MOCK_ENDPOINT and
    KINESIS_MOCK_TLS_PORT), or of one started here."""
    given = os.environ.get("KINESIS_MOCK_ENDPOINT")
    if given:
        yield given, f"https://127.0.0.1:{os.environ.get('KINESIS_MOCK_TLS_PORT', '4567')}"
        return
    started = KinesisMock()
    with started:
        yield started.endpoint, started.tls_endpoint


def create_stream(admin: Any, shards: int) -> str:
    """A new active stream whose name is one component of the metrics' names (letters, digits, ``_``)."""
    name = f"execmetrics_{uuid.uuid4().hex[:8]}"
    admin.create_stream(StreamName=name, ShardCount=shards)
    admin.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})
    return name


def put_records(admin: Any, stream: str, count: int) -> None:
    for start in range(0, count, 100):
        records = [
            {"Data": f"record {i}".encode(), "PartitionKey": f"key-{i}"} for i in range(start, min(count, start + 100))
        ]
        answer = admin.put_records(StreamName=stream, Records=records)
        assert answer["FailedRecordCount"] == 0, answer


def scraped(ui_port: int) -> Dict[str, float]:
    """The driver's ``/metrics/prometheus``: each sample's name (with its labels) and value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/metrics/prometheus", timeout=5) as answer:
        lines = answer.read().decode().splitlines()
    return {name: float(value) for name, value in (line.rsplit(" ", 1) for line in lines if line and line[0] != "#")}


def executor_counters(folder: Path, kind: str, metric: str) -> Dict[str, int]:
    """The latest value of counter ``metric`` of this query's ``kind`` sources in the CSV sink's files, by executor id
    (a file is ``<namespace>.<executor id>.<source>.<metric>.csv``, its last line ``<time>,<count>``)."""
    pattern = re.compile(rf"{NAMESPACE}\.([^.]+)\.kinesis\.{QUERY}\.[^.]+\.{kind}\.{metric}\.csv")
    counts = {}
    for csv in folder.iterdir():
        match = pattern.fullmatch(csv.name)
        if match:
            rows = csv.read_text().split()
            if len(rows) > 1:  # a header, then one row per report
                counts[match.group(1)] = int(rows[-1].split(",")[1])
    return counts


def metrics_session(master: str, ui_port: int, folder: Path) -> Any:
    """A session on the cluster whose driver serves its metrics at ``/metrics/prometheus`` of its UI (Spark's
    PrometheusServlet) and whose executors write theirs under ``folder`` every second (Spark's CsvSink, configured
    for executors only), as docs/monitoring.md shows."""
    conf = {
        "spark.ui.enabled": "true",
        "spark.ui.port": str(ui_port),
        "spark.ui.prometheus.enabled": "true",
        "spark.metrics.namespace": NAMESPACE,
        "spark.metrics.conf.*.sink.prometheusServlet.class": "org.apache.spark.metrics.sink.PrometheusServlet",
        "spark.metrics.conf.*.sink.prometheusServlet.path": "/metrics/prometheus",
        "spark.metrics.conf.executor.sink.csv.class": "org.apache.spark.metrics.sink.CsvSink",
        "spark.metrics.conf.executor.sink.csv.period": "1",
        "spark.metrics.conf.executor.sink.csv.unit": "seconds",
        "spark.metrics.conf.executor.sink.csv.directory": str(folder),
    }
    builder = cluster_builder(master, "executor-metrics")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def start_copy(spark: Any, emulator: Tuple[str, str], source: str, target: str, checkpoint: Path) -> Any:
    """Starts query ``QUERY``: it copies ``source`` into ``target`` through the ``aws-kinesis`` sink."""
    endpoint, tls_endpoint = emulator
    records = (
        spark.readStream.format("aws-kinesis")
        .options(**CREDENTIALS)
        .options(**{"kinesis.streamName": source, "kinesis.endpointUrl": endpoint})
        .option("kinesis.startingPosition", "TRIM_HORIZON")
        .load()
    )
    return (
        records.selectExpr("data", "partitionKey")
        .writeStream.format("aws-kinesis")
        .queryName(QUERY)
        .options(**CREDENTIALS)
        .options(**{"kinesis.streamName": target, "kinesis.endpointUrl": tls_endpoint})
        .option("kinesis.verifyCertificate", "false")
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="1 second")
        .start()
    )


def test_given_a_query_on_a_cluster_then_the_driver_and_the_executors_report_each_record_once(
    tmp_path: Path, cluster: StandaloneCluster, emulator: Tuple[str, str]
) -> None:
    # Given a stream of two shards holding 300 records, and a second stream to copy them to
    admin = kinesis_client(emulator[0], attempts=10)
    source, target = create_stream(admin, shards=2), create_stream(admin, shards=1)
    put_records(admin, source, RECORDS)
    # And a session on the cluster whose driver serves its metrics at /metrics/prometheus and whose executors write
    # theirs to CSV files
    metrics, ui_port = tmp_path / "executor-metrics", free_port()
    metrics.mkdir()
    spark = metrics_session(cluster.url, ui_port, metrics)
    try:
        # When a query copies the stream into the other through the aws-kinesis sink
        query = start_copy(spark, emulator, source, target, tmp_path / "checkpoint")
        driver_read = f"metrics_{NAMESPACE}_driver_kinesis_{QUERY}_{source}_batches_recordsRead_Count"
        seen: Dict[str, Any] = {}

        def every_record_reported() -> bool:
            seen.update(
                driver=scraped(ui_port).get(f'{driver_read}{{type="counters"}}'),
                reads=executor_counters(metrics, "reads", "recordsRead"),
                writes=executor_counters(metrics, "writes", "rowsWritten"),
            )
            executors = (sum(seen["reads"].values()), sum(seen["writes"].values()))
            return seen["driver"] == RECORDS and executors == (RECORDS, RECORDS)

        try:
            wait_for(every_record_reported, 90, f"the driver's and executors' metrics to count {RECORDS} records", 0.5)
        except TimeoutError as e:
            raise AssertionError(f"{e}: last seen {seen}; query {query.exception() or query.status}") from None
        print(f"reported: {seen}")
        # Then the driver's scrape shows its batches source with every record once, and no reads source: its JVM ran
        # no task
        driver = scraped(ui_port)
        assert driver[f'{driver_read}{{type="counters"}}'] == RECORDS
        assert not [name for name in driver if f"_kinesis_{QUERY}_" in name and "_reads_" in name], driver.keys()
        # And the executors' files show the readers' and the sink's sources with every record once, from executor
        # JVMs only
        executors = set(seen["reads"]) | set(seen["writes"])
        assert executors and "driver" not in executors, seen
        assert sum(seen["reads"].values()) == sum(seen["writes"].values()) == RECORDS, seen
        # And the target holds the copies the sink's metrics counted
        assert sum(stream_records(emulator[0], target)[0].values()) == RECORDS
        query.stop()
    finally:
        spark.stop()
