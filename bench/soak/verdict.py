"""Whether a soak's series stay flat, and their plots.

A series is judged on its samples after the warm-up: the least-squares slope, projected over one hour, must stay
under its stated limit (``LIMITS``: a share of the series' median or an absolute amount, whichever is larger).
Threads are judged without Spark's two capped block-manager pools (``probes.CAPPED_POOLS``), which hover near their
cap of 100 threads each and move with the machine's load; the soak records those apart.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

#: column -> (what it is, allowed growth per hour as a share of the median, absolute allowance per hour)
LIMITS: Dict[str, Tuple[str, float, float]] = {
    "driver_heap_mb": ("driver heap after GC (MB)", 0.10, 16),
    "executor_heap_mb": ("executors' heap after GC, summed (MB)", 0.10, 16),
    "driver_other_threads": ("driver threads, Spark's capped pools apart", 0.05, 4),
    "executor_other_threads": ("executors' threads, Spark's capped pools apart", 0.05, 4),
    "driver_fds": ("driver open file descriptors", 0.05, 8),
    "executor_fds": ("executors' open file descriptors", 0.05, 8),
    "driver_connections": ("driver HTTP connections to Kinesis", 0.0, 4),
    "executor_connections": ("executors' HTTP connections to Kinesis", 0.0, 4),
    "checkpoint_mb": ("checkpoint directory (MB)", 0.10, 1),
    "metadata_entries": ("metadata store entries (files or items)", 0.10, 20),
    "lag_ms": ("lag: max MillisBehindLatest (ms)", 0.0, 10_000),
    "getrecords_per_shard_s": ("GetRecords calls per open shard per second", 0.10, 0.5),
}

#: Not a slope but a ceiling: each shard allows 5 GetRecords calls per second, shared by every consumer.
GETRECORDS_CEILING = 5.0


def slope_per_hour(xs: Sequence[float], ys: Sequence[float]) -> float:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return 0.0 if var == 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var * 3600


def judge(rows: List[Dict[str, float]], warmup_s: float) -> List[Dict[str, object]]:
    """One verdict per column of ``LIMITS``: slope per hour, limit, end/start ratio, OK or GROWS."""
    steady = [r for r in rows if r["elapsed_s"] >= warmup_s] or rows
    verdicts = []
    for column, (label, share, floor) in LIMITS.items():
        points = [(r["elapsed_s"], r[column]) for r in steady if r.get(column) == r.get(column)]  # drops NaN
        if len(points) < 3:
            verdicts.append({"column": column, "label": label, "verdict": "TOO FEW SAMPLES", "ok": False})
            continue
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        slope = slope_per_hour(xs, ys)
        limit = max(share * abs(statistics.median(ys)), floor)
        ok = slope <= limit
        if column == "getrecords_per_shard_s":
            ok = ok and max(ys) <= GETRECORDS_CEILING
        start, end = statistics.fmean(ys[:3]), statistics.fmean(ys[-3:])
        verdicts.append({
            "column": column, "label": label, "slope_per_hour": slope, "limit_per_hour": limit,
            "start": start, "end": end, "ratio": (end / start) if start else float("nan"),
            "verdict": "OK" if ok else "GROWS", "ok": ok,
        })  # fmt: skip
    return verdicts


def write_csv(rows: List[Dict[str, float]], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path: Path) -> List[Dict[str, float]]:
    with open(path) as f:
        return [
            {k: float(v) if v not in ("", "nan") else float("nan") for k, v in r.items()} for r in csv.DictReader(f)
        ]


def plot(rows: List[Dict[str, float]], verdicts: List[Dict[str, object]], title: str, path: Path) -> None:
    """One panel per judged series, its fitted line over the steady part, and the verdict in the panel's title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(4, 3, figsize=(15, 14))
    minutes = [r["elapsed_s"] / 60 for r in rows]
    for ax, v in zip(axes.flat, verdicts):
        ys = [r[str(v["column"])] for r in rows]
        ax.plot(minutes, ys, marker=".", linewidth=1)
        ax.set_ylim(bottom=0, top=max([y for y in ys if y == y] + [1]) * 1.3)
        if "slope_per_hour" in v:
            ax.set_title(
                f"{v['label']}\n{v['verdict']}: {float(v['slope_per_hour']):+.3g}/h "  # type: ignore[arg-type]
                f"(limit {float(v['limit_per_hour']):.3g}/h), end/start {float(v['ratio']):.2f}",  # type: ignore[arg-type]
                fontsize=9,
                color="black" if v["ok"] else "red",
            )
        else:
            ax.set_title(f"{v['label']}\n{v['verdict']}", fontsize=9, color="red")
        ax.set_xlabel("minutes")
        ax.grid(alpha=0.3)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
