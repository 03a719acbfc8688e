"""A cluster fault run: a producer writes, a query on a multi-JVM cluster reads, faults are injected one after the
other in an order the seed decides, and at the end every record the stream holds must be in the file sink exactly
once. Optionally a second query in the same driver copies the stream through the Kinesis sink under the same faults:
there every record must arrive at least once, duplicates counted.

Each fault waits until the sink has moved on by ``step_records`` since the previous one, so faults never pile up on a
query that has not recovered, and a query that stops making progress fails the run within a bounded time.

``python scenario.py --consumer polling --store hdfs --faults 100`` runs the long variant and prints the fault counts
and the exactness result (``bench/cluster-faults`` runs it in the pyspark environment); ``--kinesis-sink`` adds the
Kinesis-sink query.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Counter, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from explain import Fault, explain  # noqa: E402
from fault_injector import FaultInjector  # noqa: E402
from harness import (  # noqa: E402
    DriverProcess,
    FileSinkOutput,
    PersistentEmulator,
    Producer,
    TcpRelay,
    kinesis_client,
    stream_records,
    wait_for,
)
from standalone import StandaloneCluster  # noqa: E402

from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY  # noqa: E402

#: What a polling run draws its faults from (fan-out replaces the injector's faults with subscription drops).
POLLING_FAULTS = ["executor", "driver", "outage", "storm", "emulator", "split", "merge"]
EFO_FAULTS = ["executor", "driver", "subscriptions", "split", "merge"]


@dataclass
class Scenario:
    """One run. ``faults`` None draws ``count`` faults from the consumer's kinds, each kind at least once; a list
    names the faults to strike. Either way they strike in an order the seed decides."""

    consumer: str = "polling"  # or "efo"
    store: str = "hdfs"  # or "dynamodb"
    kinesis_sink: bool = False  # a second query copying the stream through the aws-kinesis sink
    sink_producer: str = "KPL"  # its kinesis.sink.producer: KPL (TLS port) or PutRecords (plain port)
    seed: int = 23
    count: int = 7
    faults: Optional[List[str]] = None
    storm_seconds: float = 10.0
    outage_seconds: float = 5.0
    step_records: int = 60
    step_timeout: float = 300.0
    background_faults: float = 0.02  # each of: 5xx burst, dropped connection, slow answer, per request


@dataclass
class SinkReport:
    """What the Kinesis sink's target stream holds, compared with the source stream (at least once)."""

    got: int = 0
    missing: int = 0
    duplicates: int = 0
    unexpected: int = 0

    def summary(self) -> str:
        return (
            f"Kinesis sink: {self.got} records in the target, missing {self.missing}, duplicates {self.duplicates}, "
            f"unexpected {self.unexpected}"
        )


@dataclass
class Report:
    faults: Counter[str] = field(default_factory=collections.Counter)
    injected: Dict[str, int] = field(default_factory=dict)
    expected: int = 0
    got: int = 0
    missing: int = 0
    duplicates: int = 0
    unexpected: int = 0
    mid_batch_kills: int = 0
    speculative_tasks: int = 0
    seconds: float = 0.0
    sink: Optional[SinkReport] = None
    timeline: List[Fault] = field(default_factory=list)
    explanation: str = ""  # per shard, the batches and faults behind each missing or repeated record

    def summary(self) -> str:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
        injected = ", ".join(f"{k} {v}" for k, v in self.injected.items() if v)
        return (
            f"faults: {faults} ({self.mid_batch_kills} kills while tasks ran); injector: {injected or 'none'}; "
            f"speculative task copies {self.speculative_tasks}; records in the stream {self.expected}, in the sink "
            f"{self.got}: missing {self.missing}, duplicates {self.duplicates}, unexpected {self.unexpected}; "
            + (f"{self.sink.summary()}; " if self.sink else "")
            + f"{self.seconds:.0f} s"
        )


def fault_order(scenario: Scenario) -> List[str]:
    rng = random.Random(scenario.seed)
    if scenario.faults is not None:
        drawn = list(scenario.faults)
    else:
        kinds = {"polling": POLLING_FAULTS, "efo": EFO_FAULTS}[scenario.consumer]
        drawn = kinds + [rng.choice(kinds) for _ in range(max(0, scenario.count - len(kinds)))]
    rng.shuffle(drawn)
    return drawn


def speculative_tasks(event_log_dir: Path) -> int:
    """Speculative task attempts started, counted in the event logs of every driver of the run."""
    count = 0
    for log in event_log_dir.rglob("*"):  # Spark 4 writes each application's log as a folder of rolled files
        if not log.is_file():
            continue
        for line in log.read_text(errors="replace").splitlines():
            if '"SparkListenerTaskStart"' in line and '"Speculative":true' in line:
                count += 1
    return count


def run(scenario: Scenario, folder: Path, master: str, dynamodb_endpoint: Optional[str] = None) -> Report:
    """Runs ``scenario`` on the standalone cluster at ``master`` (see standalone.py) in ``folder``."""
    started = time.monotonic()
    report = Report()
    faults = fault_order(scenario)
    print(f"cluster run {scenario}: faults in order {faults}", flush=True)
    emulator = PersistentEmulator(folder / "emulator").start()
    injector: Optional[FaultInjector] = None
    relay: Optional[TcpRelay] = None  # fan-out's way to the emulator
    sink_relay: Optional[TcpRelay] = None  # the Kinesis sink's
    producer: Optional[Producer] = None
    driver: Optional[DriverProcess] = None
    try:
        admin = kinesis_client(emulator.mock.endpoint, attempts=10)
        stream = f"faults-{uuid.uuid4().hex[:8]}"
        admin.create_stream(StreamName=stream, ShardCount=2)
        admin.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})
        source = {
            "kinesis.streamName": stream,
            "kinesis.region": REGION,
            "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
            "kinesis.awsSecretKey": SECRET_KEY,
            "kinesis.startingPosition": "TRIM_HORIZON",
            "kinesis.maxRecordsPerTrigger": "400",
        }
        if scenario.consumer == "efo":
            relay = TcpRelay(emulator.mock.tls_port).start()
            source.update({
                "kinesis.endpointUrl": f"https://127.0.0.1:{relay.port}",
                "kinesis.verifyCertificate": "false",
                "kinesis.consumerType": "SubscribeToShard",
            })  # fmt: skip
        else:
            p = scenario.background_faults
            injector = FaultInjector(emulator.mock.port, scenario.seed, p_burst=p, p_drop=p, p_slow=p).start()
            source["kinesis.endpointUrl"] = injector.endpoint
        if scenario.store == "dynamodb":
            assert dynamodb_endpoint, "the DynamoDB store needs DYNAMODB_LOCAL_ENDPOINT"
            source.update({
                "kinesis.metadataCommitterType": "DYNAMODB",
                "kinesis.dynamodb.endpointUrl": dynamodb_endpoint,
                "kinesis.dynamodb.tableName": f"faults-{uuid.uuid4().hex[:8]}",
            })  # fmt: skip
        target = f"{stream}-out"
        config: Dict[str, Any] = {
            "name": f"{scenario.consumer}-{scenario.store}",
            "master": master,
            "seed": scenario.seed,
            "sourceOptions": source,
            "checkpoint": str(folder / "checkpoint"),
            "outputDir": str(folder / "output"),
            "eventLogDir": str(folder / "events"),
        }
        (folder / "events").mkdir(parents=True, exist_ok=True)
        if scenario.kinesis_sink:
            admin.create_stream(StreamName=target, ShardCount=2)
            admin.get_waiter("stream_exists").wait(StreamName=target, WaiterConfig={"Delay": 0.2})
            config["sinkCheckpoint"] = str(folder / "sink-checkpoint")
            # The copy reads as the run does, with a fan-out run's one consumer left to it (a consumer has one
            # subscription per shard: the copy polls) and a metadata table of its own (one per query)
            copy_source = dict(source)
            if scenario.consumer == "efo":
                copy_source["kinesis.consumerType"] = "GetRecords"
            if scenario.store == "dynamodb":
                copy_source["kinesis.dynamodb.tableName"] = f"{source['kinesis.dynamodb.tableName']}-copy"
            config["copySourceOptions"] = copy_source
            put_records = scenario.sink_producer == "PutRecords"  # speaks plain HTTP too; the KPL HTTPS only
            sink_relay = TcpRelay(emulator.mock.port if put_records else emulator.mock.tls_port).start()
            config["sinkOptions"] = {
                "kinesis.streamName": target,
                "kinesis.region": REGION,
                "kinesis.endpointUrl": f"{'http' if put_records else 'https'}://127.0.0.1:{sink_relay.port}",
                "kinesis.sink.producer": scenario.sink_producer,
                "kinesis.verifyCertificate": "false",
                "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
                "kinesis.awsSecretKey": SECRET_KEY,
                "kinesis.sink.aggregationEnabled": "false",
            }
        output = FileSinkOutput(folder / "output")
        # What an emulator restart holds off: every connection of the connector's that may write.
        fronts = [front for front in (relay, sink_relay) if front is not None]

        def delivered() -> int:
            return len(output.rows())

        producer = Producer(emulator.mock.endpoint, stream).start()
        attempt = 0
        driver = start_driver(scenario, config, folder, attempt)
        mark = 0
        for number, fault in enumerate(faults, 1):
            goal = mark + scenario.step_records
            wait_for(
                lambda: driver.failure() or delivered() >= goal,  # noqa: B023
                scenario.step_timeout,
                f"the sink to reach {goal} rows before fault {number} ({fault})",
            )
            if driver.failure():
                raise AssertionError(f"the query failed before fault {number} ({fault}): {driver.failure()}")
            mark = max(goal, delivered())
            print(f"fault {number}/{len(faults)}: {fault} (sink rows {mark})", flush=True)
            report.timeline.append(Fault(number, fault, time.time(), mark))
            if fault == "executor":
                report.mid_batch_kills += bool(driver.kill_executor()["midBatch"])
                if relay is not None:
                    forget_dead_subscriptions(emulator, producer, fronts)
            elif fault == "driver":
                report.mid_batch_kills += driver.sigkill()
                attempt += 1
                driver = start_driver(scenario, config, folder, attempt)
            elif fault == "outage":
                assert injector is not None
                injector.outage(scenario.outage_seconds)
            elif fault == "storm":
                assert injector is not None
                injector.storm(1 / 3, scenario.storm_seconds)
            elif fault == "subscriptions":
                assert relay is not None
                relay.drop_all()
                forget_dead_subscriptions(emulator, producer, fronts)
            elif fault == "emulator":
                restart_emulator(emulator, producer, fronts)
            elif fault in ("split", "merge"):
                reshard(admin, stream, fault)
            report.faults[fault] += 1
        producer.stop()
        expected, _ = stream_records(emulator.mock.endpoint, stream)
        report.expected = sum(expected.values())
        # Every record the stream holds, each counted once: repeats must not end the wait before the last is read.
        wait_then_judge(
            lambda: driver.failure() or not set(expected) - set(output.records()),  # noqa: B023
            scenario.step_timeout,
            f"the sink to hold each of the {report.expected} records",
        )
        if driver.failure():
            raise AssertionError(f"the query failed: {driver.failure()}")
        wanted = collections.Counter(f"{shard}|{seq}" for shard, seq, _ in expected)
        if scenario.kinesis_sink:
            # The copy catches up too: every record at least once in the target (its duplicates are counted below).
            wait_then_judge(
                lambda: driver.failure() or not wanted - copies(emulator.mock.endpoint, target),  # noqa: B023
                scenario.step_timeout,
                f"the Kinesis sink's target to hold all {report.expected} records",
                every=1.0,  # each check reads the whole target stream
            )
        driver.stop()
        if driver.failure():
            raise AssertionError(f"the query failed when stopped: {driver.failure()}")
        got, want = output.records(), expected
        report.got = sum(got.values())
        report.missing = sum((want - got).values())
        report.unexpected = sum(1 for key in got if key not in want)
        report.duplicates = sum(n - 1 for key, n in got.items() if key in want and n > 1)
        if report.missing or report.duplicates or report.unexpected:
            report.explanation = explain(folder, want, got, report.timeline, output)
        if scenario.kinesis_sink:
            copied = copies(emulator.mock.endpoint, target)
            report.sink = SinkReport(
                got=sum(copied.values()),
                missing=sum((wanted - copied).values()),
                duplicates=sum(n - 1 for key, n in copied.items() if key in wanted and n > 1),
                unexpected=sum(1 for key in copied if key not in wanted),
            )
        report.speculative_tasks = speculative_tasks(folder / "events")
        if injector is not None:
            report.injected = dict(injector.counts)
            print(injector.summary(), flush=True)
        return report
    finally:
        report.seconds = time.monotonic() - started
        for stop in (
            producer.stop if producer else None,
            (lambda: driver.exited() or driver.sigkill(0)) if driver else None,
            injector.stop if injector else None,
            relay.stop if relay else None,
            sink_relay.stop if sink_relay else None,
            emulator.stop,
        ):
            if stop is not None:
                try:
                    stop()
                except Exception as e:  # cleaning up must not hide the run's own failure
                    print(f"cleanup: {e}", file=sys.stderr)


def wait_then_judge(condition: Callable[[], Any], timeout: float, what: str, every: float = 0.1) -> None:
    """Waits as ``wait_for`` does; a wait that ends unmet is said, and the run goes on to its verdict, which counts and
    explains what is missing."""
    try:
        wait_for(condition, timeout, what, every)
    except TimeoutError as e:
        print(f"{e}: stopping the query and judging what the sinks hold", flush=True)


def restart_emulator(emulator: PersistentEmulator, producer: Producer, fronts: List[TcpRelay]) -> None:
    """Kills and restarts kinesis-mock, losing no record it acknowledged: the producer pauses and the connector's
    ``fronts`` hold meanwhile (see :meth:`PersistentEmulator.restart`)."""
    producer.pause()
    try:
        emulator.restart(fronts)
    finally:
        producer.resume()


def forget_dead_subscriptions(emulator: PersistentEmulator, producer: Producer, fronts: List[TcpRelay]) -> None:
    """Restarts kinesis-mock with its data after a fault left fan-out subscriptions without a reader. It keeps such a
    subscription until its 5-minute end and refuses the consumer's new ones on that shard meanwhile; AWS lets a new
    subscription take the shard over after about 5 s. Its subscriptions are not persisted, so a restart ends them."""
    restart_emulator(emulator, producer, fronts)


def start_driver(scenario: Scenario, config: Dict[str, Any], folder: Path, attempt: int) -> DriverProcess:
    """Starts the run's driver (again after a kill) and waits until its queries run. A fan-out driver reads through a
    consumer of its own: kinesis-mock keeps a SIGKILLed reader's subscriptions until their 5-minute end and refuses
    the same consumer's new ones meanwhile (AWS hands them over after about 5 s; the fake client models that).
    Offsets do not depend on the consumer, so this is also a user's switch of consumers across a restart."""
    if scenario.consumer == "efo":
        config["sourceOptions"]["kinesis.consumerName"] = f"faults-{scenario.seed}-{attempt}"
    driver = DriverProcess(sys.executable, config, folder, attempt)
    driver.await_ready()
    return driver


def copies(endpoint: str, target: str) -> Counter[str]:
    """The Kinesis sink's copies in its target stream, by the source record each names (``shard|sequence``)."""
    held, data = stream_records(endpoint, target)
    got: Counter[str] = collections.Counter()
    for key, n in held.items():
        got[data[key].decode()] += n
    return got


def reshard(admin: Any, stream: str, kind: str) -> None:
    """Splits the open shard with the widest hash range, or merges the first two adjacent open shards."""
    open_shards = [
        s for s in admin.list_shards(StreamName=stream)["Shards"]
        if "EndingSequenceNumber" not in s["SequenceNumberRange"]
    ]  # fmt: skip
    ranges = sorted(open_shards, key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))
    if kind == "split" or len(ranges) < 2:
        widest = max(
            ranges, key=lambda s: int(s["HashKeyRange"]["EndingHashKey"]) - int(s["HashKeyRange"]["StartingHashKey"])
        )
        low, high = int(widest["HashKeyRange"]["StartingHashKey"]), int(widest["HashKeyRange"]["EndingHashKey"])
        admin.split_shard(StreamName=stream, ShardToSplit=widest["ShardId"], NewStartingHashKey=str((low + high) // 2))
    else:
        admin.merge_shards(
            StreamName=stream, ShardToMerge=ranges[0]["ShardId"], AdjacentShardToMerge=ranges[1]["ShardId"]
        )
    wait_for(
        lambda: (
            admin.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamStatus"] == "ACTIVE"
        ),
        30,
        f"the stream to be active after the {kind}",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="A cluster fault run; prints the fault counts and the exactness.")
    parser.add_argument("--consumer", choices=["polling", "efo"], default="polling")
    parser.add_argument("--store", choices=["hdfs", "dynamodb"], default="hdfs")
    parser.add_argument(
        "--kinesis-sink", action="store_true", help="also copy the stream through the aws-kinesis sink (at least once)"
    )
    parser.add_argument(
        "--sink-producer", choices=["KPL", "PutRecords"], default="KPL", help="the Kinesis sink's kinesis.sink.producer"
    )
    parser.add_argument("--faults", type=int, default=100, help="how many faults (default 100)")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    parser.add_argument("--storm-seconds", type=float, default=60.0)
    parser.add_argument("--outage-seconds", type=float, default=8.0)
    parser.add_argument("--folder", type=Path, default=Path("build") / f"cluster-faults-{os.getpid()}")
    args = parser.parse_args()
    scenario = Scenario(
        consumer=args.consumer, store=args.store, kinesis_sink=args.kinesis_sink, sink_producer=args.sink_producer,
        seed=args.seed, count=args.faults,
        storm_seconds=args.storm_seconds, outage_seconds=args.outage_seconds,
    )  # fmt: skip
    args.folder.mkdir(parents=True, exist_ok=False)
    folder = args.folder.resolve()
    with StandaloneCluster(folder / "cluster") as cluster:
        report = run(scenario, folder, cluster.url, os.environ.get("DYNAMODB_LOCAL_ENDPOINT"))
    print(f"cluster faults (seed {args.seed}): {report.summary()}")
    if report.explanation:
        print(report.explanation)
    exact = (report.missing, report.duplicates, report.unexpected) == (0, 0, 0)
    print("EXACTLY ONCE" if exact else "FAILED: the file sink does not hold every record exactly once")
    if report.sink is not None:
        complete = (report.sink.missing, report.sink.unexpected) == (0, 0)
        print("KINESIS SINK: NOTHING LOST" if complete else "KINESIS SINK FAILED: records lost or unexpected")
        exact = exact and complete
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
