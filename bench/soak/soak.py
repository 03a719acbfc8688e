"""Soak: one streaming query on local-cluster[2,1,1024] for a set time at a steady rate, with a reshard every few
minutes; once a minute it records what could leak (heap after GC, threads, file descriptors, connections, checkpoint
and metadata store sizes) and what the query spends (lag, GetRecords calls per shard per second), writes the series
as CSV, plots them as PNG and exits 1 when a series grows faster than its stated limit (bench/soak/verdict.py).

Run with ``bench/soak`` (see bench/README.md), which provides the pyspark environment and the connector's wheel.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

here = Path(__file__).resolve().parent
sys.path[:0] = [str(here), str(here.parents[1] / "python" / "cluster_tests")]

import probes  # noqa: E402
import verdict  # noqa: E402
from fault_injector import FaultInjector  # noqa: E402
from harness import Producer, kinesis_client  # noqa: E402
from scenario import reshard  # noqa: E402

import pyspark_kinesis  # noqa: E402
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY, KinesisMock  # noqa: E402


def session(folder: Path) -> Any:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("spark-kinesis soak")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "700m")
        .config("spark.sql.streaming.numRecentProgressUpdates", "1000")
    )
    spark = pyspark_kinesis.configure_spark_with_kinesis(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def open_shards(admin: Any, stream: str) -> int:
    shards = admin.list_shards(StreamName=stream)["Shards"]
    return sum(1 for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--consumer", choices=["polling", "efo"], default="polling")
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--rate", type=int, default=20, help="records per second the producer puts (default 20)")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--reshard-minutes", type=float, default=10, help="a split or a merge, in turn, this often")
    parser.add_argument("--sample-seconds", type=float, default=60)
    parser.add_argument("--warmup-minutes", type=float, default=5, help="samples before this are not judged")
    parser.add_argument("--folder", type=Path, default=Path("bench/target") / f"soak-{time.strftime('%Y%m%d-%H%M%S')}")
    args = parser.parse_args()
    folder = args.folder.resolve() / args.consumer
    folder.mkdir(parents=True, exist_ok=False)
    csv_path, png_path = folder / "soak.csv", folder / "soak.png"

    emulator = KinesisMock()
    emulator.start()
    admin = kinesis_client(emulator.endpoint, attempts=10)
    stream = f"soak-{uuid.uuid4().hex[:8]}"
    admin.create_stream(StreamName=stream, ShardCount=args.shards)
    admin.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150})
    source = {
        "kinesis.streamName": stream,
        "kinesis.region": REGION,
        "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
        "kinesis.awsSecretKey": SECRET_KEY,
        "kinesis.startingPosition": "TRIM_HORIZON",
    }
    counter = None
    if args.consumer == "efo":
        source.update({
            "kinesis.endpointUrl": emulator.tls_endpoint, "kinesis.verifyCertificate": "false",
            "kinesis.consumerType": "SubscribeToShard", "kinesis.consumerName": "soak",
        })  # fmt: skip
        kinesis_ports = [emulator.tls_port]
    else:
        # A pass-through proxy (no faults): it counts every call the query makes, by operation.
        counter = FaultInjector(emulator.port, seed=0).start()
        source["kinesis.endpointUrl"] = counter.endpoint
        kinesis_ports = [counter.port]
    checkpoint = folder / "checkpoint"
    spark = session(folder)
    driver_pid = spark.sparkContext._gateway.proc.pid
    query = (
        spark.readStream.format("aws-kinesis").options(**source).load()
        .selectExpr("shardId", "sequenceNumber", "CAST(data AS STRING) AS data")
        .writeStream.format("json").option("path", str(folder / "output"))
        .option("checkpointLocation", str(checkpoint)).trigger(processingTime="1 second").start()
    )  # fmt: skip
    producer = Producer(emulator.endpoint, stream, per_second=args.rate).start()
    print(f"soak: {args.consumer}, {args.minutes} min at {args.rate} records/s; series in {csv_path}", flush=True)

    rows: List[Dict[str, float]] = []
    seen: Set[Tuple[Any, Any]] = set()
    read_rows, last_calls = 0, 0
    started = time.monotonic()
    next_reshard, reshards = args.reshard_minutes * 60, 0
    status = 0
    try:
        while (elapsed := time.monotonic() - started) < args.minutes * 60:
            # The sampling period, from the last sample on: a late sample is not followed by a burst of catch-up
            # samples (each forces a full GC, after which Spark's cleaner may briefly grow its thread pools).
            time.sleep(max(0.0, (rows[-1]["elapsed_s"] if rows else 0.0) + args.sample_seconds - elapsed))
            elapsed = time.monotonic() - started
            if query.exception() is not None:
                raise RuntimeError(f"the query failed: {query.exception()}")
            if elapsed >= next_reshard:
                try:
                    reshard(admin, stream, "split" if reshards % 2 == 0 else "merge")
                    reshards += 1
                except Exception as e:  # the emulator, not the query: try again at the next sample
                    print(f"soak: the reshard failed, trying again in a minute: {e}", file=sys.stderr, flush=True)
                else:
                    next_reshard += args.reshard_minutes * 60
            calls, lag = 0, 0.0
            for p in query.recentProgress:
                key = (p["batchId"], p["timestamp"])
                if key in seen:
                    continue
                seen.add(key)
                metrics = p["sources"][0].get("metrics") or {}
                calls += int(metrics.get("getRecordsCalls", 0)) + int(metrics.get("driverGetRecordsCalls", 0))
                lag = max(lag, float(metrics.get("maxMsBehindLatest", 0)))
                read_rows += int(p["numInputRows"])
            try:
                shards = open_shards(admin, stream)
            except Exception as e:  # the emulator did not answer: the last count stands
                print(f"soak: listing the shards failed: {e}", file=sys.stderr, flush=True)
                shards = int(rows[-1]["open_shards"]) if rows else args.shards
            executors = probes.jvms_below(driver_pid, b"CoarseGrainedExecutorBackend")
            ck_bytes, _ = probes.tree_size(checkpoint)
            _, md_files = probes.tree_size(checkpoint / "sources" / "0" / "shard-ends")
            period = args.sample_seconds if rows else elapsed
            # Threads are counted before the heap probe's full GCs, after which Spark's cleaner removes a minute's
            # broadcasts at once through its capped block-manager pools.
            driver_threads, executor_threads = probes.threads(driver_pid), sum(probes.threads(p) for p in executors)
            dumps = {pid: probes.thread_names(pid) for pid in [driver_pid] + executors}
            if len(rows) % 10 == 0:  # which threads there are, to explain a thread count that grows
                with open(folder / "threads.txt", "a") as out:
                    for name, pid in [("driver", driver_pid)] + [(f"executor {p}", p) for p in executors]:
                        out.write(f"{elapsed:.0f} s, {name}: {dumps[pid].most_common(12)}\n")
            driver_pools, driver_others = probes.pool_and_other_threads(dumps[driver_pid])
            executor_counts = [probes.pool_and_other_threads(dumps[p]) for p in executors]
            executor_pools, executor_others = sum(c[0] for c in executor_counts), sum(c[1] for c in executor_counts)
            row: Dict[str, float] = {
                "elapsed_s": round(elapsed, 1),
                "driver_heap_mb": probes.heap_after_gc_mb(driver_pid),
                "executor_heap_mb": sum(probes.heap_after_gc_mb(p) for p in executors),
                "driver_other_threads": driver_others,
                "executor_other_threads": executor_others,
                "driver_fds": probes.open_fds(driver_pid),
                "executor_fds": sum(probes.open_fds(p) for p in executors),
                "driver_connections": probes.connections_to(driver_pid, kinesis_ports),
                "executor_connections": sum(probes.connections_to(p, kinesis_ports) for p in executors),
                "checkpoint_mb": ck_bytes / 1e6,
                "metadata_entries": md_files,
                "lag_ms": lag,
                "lag_records": producer.sent - read_rows,
                "getrecords_per_shard_s": calls / max(1, shards) / period,
                "proxy_getrecords_per_shard_s": float("nan"),
                "driver_threads": driver_threads,
                "executor_threads": executor_threads,
                "driver_pool_threads": driver_pools,
                "executor_pool_threads": executor_pools,
                "open_shards": shards,
                "executors": len(executors),
                "produced": producer.sent,
                "read": read_rows,
            }
            if counter is not None:
                total = counter.calls["GetRecords"]
                row["proxy_getrecords_per_shard_s"] = (total - last_calls) / max(1, shards) / period
                last_calls = total
            rows.append(row)
            verdict.write_csv(rows, csv_path)
            print("soak: " + json.dumps({k: round(v, 2) for k, v in row.items()}), flush=True)
    except Exception as e:  # the query failed or a probe broke: the series so far are still written and judged
        print(f"soak: FAILED: {e}", file=sys.stderr, flush=True)
        status = 1
    finally:
        producer.stop()
        query.stop()
        spark.stop()
        if counter is not None:
            counter.stop()
        emulator.stop()
    if not rows:
        return 1
    verdicts = verdict.judge(rows, args.warmup_minutes * 60)
    title = f"spark-kinesis soak: {args.consumer}, {elapsed / 60:.0f} min, {args.rate} records/s, {reshards} reshards"
    verdict.plot(rows, verdicts, title, png_path)
    (folder / "verdicts.json").write_text(json.dumps(verdicts, indent=1))
    for v in verdicts:
        extra = (
            f"{v['slope_per_hour']:+.3g}/h (limit {v['limit_per_hour']:.3g}/h), start {v['start']:.4g}, "
            f"end {v['end']:.4g}, end/start {v['ratio']:.2f}"
            if "slope_per_hour" in v else ""
        )  # fmt: skip
        print(f"soak: {v['verdict']:>5}  {v['label']}: {extra}")
    print(f"soak: plots in {png_path}")
    return status or (0 if all(v["ok"] for v in verdicts) else 1)


if __name__ == "__main__":
    sys.exit(main())
