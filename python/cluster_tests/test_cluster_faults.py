"""Cluster fault runs (bounded, for bin/test): a query on a Spark standalone cluster (a master and two workers on
loopback addresses of their own, an executor JVM on each, aggressive speculation) survives executor and driver
SIGKILLs, outages, a throttling storm, an emulator restart and resharding while a producer writes: the file sink holds
every record of the stream exactly once, and the Kinesis sink (the KPL in one run, its own PutRecords calls in the
other), copying the same stream under the same faults, every record at least once with duplicates bounded.

The seed (``CLUSTER_FAULTS_SEED``, default 23) decides the order of the faults and every fault the injector adds;
a failure prints it, so that the same run can be replayed. ``bench/cluster-faults`` runs the long variant.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scenario import EFO_FAULTS, POLLING_FAULTS, Report, Scenario, run
from standalone import StandaloneCluster

SEED = int(os.environ.get("CLUSTER_FAULTS_SEED", "23"))

#: The polling run's twenty faults: every kind, with 9 reshards (deep enough for merges whose child names its parents
#: out of id order, and children of children), 2 emulator restarts and 3 driver kills. One outage only: a task that
#: starts as connections are refused fails each of its attempts within seconds (bench/README.md, known defects).
POLLING_RUN = POLLING_FAULTS + [
    "driver", "driver", "emulator", "split", "merge", "split", "merge", "split", "merge", "merge", "storm", "storm",
    "executor",
]  # fmt: skip


@pytest.fixture(scope="module")
def dynamodb_endpoint() -> str:
    endpoint = os.environ.get("DYNAMODB_LOCAL_ENDPOINT")
    if not endpoint:  # a failure, not a skip: bin/test starts DynamoDB Local and sets it
        pytest.fail("DYNAMODB_LOCAL_ENDPOINT is not set: start integration-tests/scripts/dynamodb-local.sh first")
    return endpoint


def report_of(scenario: Scenario, folder: Path, cluster: StandaloneCluster, dynamodb: str = "") -> Report:
    report = run(scenario, folder, cluster.url, dynamodb or None)
    print(f"seed {scenario.seed}: {report.summary()}")
    return report


def test_given_polling_and_the_hadoop_store_when_twenty_faults_strike_then_each_record_lands_exactly_once(
    tmp_path: Path, cluster: StandaloneCluster
) -> None:
    # Given a polling query through the fault injector, its metadata in files under the shared checkpoint, and in the
    # same driver a second query copying the stream into another through the aws-kinesis sink, in batches of at most
    # 400 records (kinesis.maxRecordsPerTrigger)
    scenario = Scenario(consumer="polling", store="hdfs", kinesis_sink=True, seed=SEED, faults=POLLING_RUN)
    # When twenty faults strike in turn: executor SIGKILLs, three driver SIGKILLs while tasks run (restarts from
    # checkpoints restarted drivers wrote), an outage, three storms, two emulator restarts, four splits and five merges
    report = report_of(scenario, tmp_path, cluster)
    # Then every record of the stream is in the file sink exactly once, and every fault happened
    exact = (report.missing, report.duplicates, report.unexpected) == (0, 0, 0)
    assert exact, f"{report.summary()}\n{report.explanation}"
    assert report.got == report.expected > 0
    assert sorted(report.faults.elements()) == sorted(POLLING_RUN), report.summary()
    assert report.mid_batch_kills >= 1, report.summary()
    assert report.speculative_tasks >= 1, report.summary()
    assert report.injected["throttle"] > 0 and report.injected["reset"] + report.injected["dropped"] > 0
    # And every record reached the Kinesis sink's target; a row is written again only when its task or batch runs
    # again (a retry after a kill or a failed call, a replay after a restart, a speculative copy), so duplicates are
    # at most one batch per fault and per speculative copy (docs/sink.md's at-least-once)
    sink = report.sink
    assert sink is not None and (sink.missing, sink.unexpected) == (0, 0), report.summary()
    assert sink.duplicates <= 400 * (sum(report.faults.values()) + report.speculative_tasks), report.summary()


def test_given_fan_out_and_the_dynamodb_store_when_every_fault_strikes_then_each_record_lands_exactly_once(
    tmp_path: Path, cluster: StandaloneCluster, dynamodb_endpoint: str
) -> None:
    # Given a fan-out query (SubscribeToShard over HTTP/2 and TLS, through a relay that can reset every connection)
    # with its metadata in DynamoDB Local, and a second query copying the stream through the aws-kinesis sink with its
    # own PutRecords calls (kinesis.sink.producer=PutRecords, no KPL), over plain HTTP through a relay of its own
    scenario = Scenario(
        consumer="efo", store="dynamodb", kinesis_sink=True, sink_producer="PutRecords", seed=SEED, faults=EFO_FAULTS
    )
    # When an executor SIGKILL, a driver SIGKILL, every subscription dropped at once, a split and a merge strike in turn
    # (after the executor kill and the drop, kinesis-mock restarts: see scenario.forget_dead_subscriptions)
    report = report_of(scenario, tmp_path, cluster, dynamodb_endpoint)
    # Then every record is in the file sink exactly once, and every fault happened
    exact = (report.missing, report.duplicates, report.unexpected) == (0, 0, 0)
    assert exact, f"{report.summary()}\n{report.explanation}"
    assert report.got == report.expected > 0
    assert sorted(report.faults.elements()) == sorted(EFO_FAULTS), report.summary()
    assert report.mid_batch_kills >= 1, report.summary()
    # And every record reached the Kinesis sink's target, duplicates bounded as in the polling run
    sink = report.sink
    assert sink is not None and (sink.missing, sink.unexpected) == (0, 0), report.summary()
    assert sink.duplicates <= 400 * (sum(report.faults.values()) + report.speculative_tasks), report.summary()
