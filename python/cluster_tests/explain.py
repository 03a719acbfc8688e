"""Explains a cluster fault run's verdict from what the run left in its folder: for each shard with missing or
repeated records, which micro-batches carried each record (the file sink's log names each batch's files), where each of
those batches started and ended the shard (the query's offsets log: a batch's offset holds where it starts each shard,
and the next batch's where it ended), what the drivers logged about the shard, and the faults that struck meanwhile.
The query keeps every batch's logs for this (``cluster_driver.py`` sets Spark's retention and leaves the file sink's
log uncompacted)."""

from __future__ import annotations

import collections
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Counter, Dict, List, Optional, Sequence, Tuple

from harness import FileSinkOutput, Record

#: Records named per group of records that share the same batches: enough to look them up, few enough to read.
SHOWN_RECORDS = 3
#: Driver log lines quoted per shard.
SHOWN_LOG_LINES = 8


@dataclass(frozen=True)
class Fault:
    """A fault the run struck, when (epoch seconds), and what the sink held then."""

    number: int
    kind: str
    at: float
    sink_rows: int


def source_offsets(checkpoint: Path) -> Dict[int, Dict[str, Any]]:
    """Spark's batch id -> the connector's offset JSON (the first source's) of every batch in the offsets log."""
    found: Dict[int, Dict[str, Any]] = {}
    folder = checkpoint / "offsets"
    for entry in folder.iterdir() if folder.is_dir() else []:
        if entry.name.isdigit():
            lines = entry.read_text().splitlines()
            if len(lines) >= 3 and lines[2].startswith("{"):
                found[int(entry.name)] = json.loads(lines[2])
    return found


def position_of(offset: Optional[Dict[str, Any]], shard: str) -> str:
    """Where ``offset`` has ``shard``: its position, or why it has none."""
    if offset is None:
        return "(no offset logged)"
    for shards in offset.get("streams", {}).values():
        if shard in shards:
            p = shards[shard]["position"]
            return p["type"] + (f" {p['sequenceNumber']}" if "sequenceNumber" in p else "")
    return "(not tracked)"


def read_of(offset: Optional[Dict[str, Any]], shard: str) -> str:
    """How the batch of ``offset`` reads ``shard``, per its plan."""
    for reads in (offset or {}).get("reads", {}).values():
        if shard in reads:
            return "read " + json.dumps(reads[shard], sort_keys=True)
    return "not read by its plan"


def log_lines(folder: Path, shard: str) -> List[str]:
    """Warnings and errors the run's drivers logged that name ``shard``."""
    lines: List[str] = []
    pattern = re.compile(rf"\b{re.escape(shard)}\b")
    for log in sorted(folder.glob("driver-*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if pattern.search(line) and (" WARN " in line or " ERROR " in line):
                lines.append(f"{log.name}: {line.strip()[:300]}")
    return lines


def explain(
    folder: Path,
    wanted: Counter[Record],
    got: Counter[Record],
    faults: Sequence[Fault],
    output: FileSinkOutput,
) -> str:
    """What went wrong, shard by shard, in the run folder ``folder`` whose file sink ``output`` holds ``got``."""
    batch_of = output.batch_of_files()
    batches_of: Dict[Record, List[int]] = collections.defaultdict(list)
    for path, rows in output.rows_by_file().items():
        for r in rows:
            batches_of[(r["shardId"], r["sequenceNumber"], int(r["subSequenceNumber"]))].append(batch_of.get(path, -1))
    checkpoint = folder / "checkpoint"
    offsets = source_offsets(checkpoint)

    def mtime(kind: str, batch: int) -> Optional[float]:
        path = checkpoint / kind / str(batch)
        return path.stat().st_mtime if path.exists() else None

    by_shard: Dict[str, Dict[str, List[Record]]] = collections.defaultdict(lambda: {"missing": [], "repeated": []})
    for key in wanted - got:
        by_shard[key[0]]["missing"].append(key)
    for key, n in got.items():
        if n > 1:
            by_shard[key[0]]["repeated"].append(key)
    out: List[str] = []
    for shard, found in sorted(by_shard.items()):
        out.append(f"shard {shard}: {len(found['missing'])} missing, {len(found['repeated'])} repeated")
        groups: Dict[Tuple[int, ...], List[Record]] = collections.defaultdict(list)
        for key in sorted(found["repeated"], key=lambda k: (int(k[1]), k[2])):
            groups[tuple(sorted(batches_of[key]))].append(key)
        for batches, keys in sorted(groups.items()):
            names = ", ".join(k[1] for k in keys[:SHOWN_RECORDS]) + (" ..." if len(keys) > SHOWN_RECORDS else "")
            out.append(f"  {len(keys)} record(s) in batches {list(batches)}: {names}")
            for b in sorted(set(batches)):
                out.append(
                    f"    batch {b} (source batch {offsets.get(b, {}).get('batch')}): starts at "
                    f"{position_of(offsets.get(b), shard)}, {read_of(offsets.get(b), shard)}; the next batch starts "
                    f"at {position_of(offsets.get(b + 1), shard)}"
                )
            numbers = collections.Counter(offsets[b].get("batch") for b in set(batches) if b in offsets)
            same = sorted(b for b in set(batches) if b in offsets and numbers[offsets[b].get("batch")] > 1)
            if same:
                out.append(f"    Spark batches {same} carry the same source offset: Spark ran one batch's offset again")
            first, last = min(batches), max(batches)
            since, until = mtime("offsets", first), mtime("commits", last) or mtime("offsets", last + 1)
            if since is None:
                out.append(f"    faults around batch {first}: unknown (its offset is not in the log)")
            else:
                struck = [f for f in faults if since - 5 <= f.at <= (until or float("inf")) + 5]
                names = ", ".join(f"{f.number} {f.kind}" for f in struck) or "none"
                out.append(
                    f"    faults from 5 s before batch {first} was planned to 5 s after batch {last} ended: {names}"
                )
        if found["missing"]:
            keys = sorted(found["missing"], key=lambda k: (int(k[1]), k[2]))
            last_batch = max(offsets) if offsets else None
            out.append(
                f"  missing {keys[0][1]} .. {keys[-1][1]}; the last batch logged ({last_batch}) has the shard at "
                f"{position_of(offsets.get(last_batch) if last_batch is not None else None, shard)}"
            )
        lines = log_lines(folder, shard)
        out += [f"    {line}" for line in lines[:SHOWN_LOG_LINES]]
        if len(lines) > SHOWN_LOG_LINES:
            out.append(f"    ... {len(lines) - SHOWN_LOG_LINES} more driver log line(s) name {shard}")
    return "\n".join(out)
