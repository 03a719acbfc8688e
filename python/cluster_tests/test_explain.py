"""The verdict's explanation of a failed cluster run, from a run folder laid out as the query leaves it: the file
sink's log and files, the query's offsets and commits logs, the drivers' logs."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any, Dict, List

from explain import Fault, explain
from harness import FileSinkOutput

SHARD = "shardId-000000000012"


def offset(batch: int, position: str) -> Dict[str, Any]:
    return {
        "batch": batch,
        "reads": {"s": {SHARD: {"maxRecords": 400, "task": 0}}},
        "streams": {"s": {SHARD: {"position": {"sequenceNumber": position, "type": "AFTER_SEQUENCE_NUMBER"}}}},
        "version": 3,
    }


def lay_out_run(folder: Path, batches: List[Dict[str, Any]]) -> None:
    """Per Spark batch: its source offset and the rows of the one file the file sink committed for it."""
    for kind in ("output/_spark_metadata", "checkpoint/offsets", "checkpoint/commits"):
        (folder / kind).mkdir(parents=True)
    for spark_batch, b in enumerate(batches):
        data = folder / "output" / f"part-{spark_batch}.json"
        data.write_text("".join(json.dumps(r) + "\n" for r in b["rows"]))
        entry = {"path": f"file:{data}", "action": "add"}
        (folder / "output/_spark_metadata" / str(spark_batch)).write_text("v1\n" + json.dumps(entry) + "\n")
        (folder / "checkpoint/offsets" / str(spark_batch)).write_text("v1\n{}\n" + json.dumps(b["offset"]) + "\n")
        (folder / "checkpoint/commits" / str(spark_batch)).write_text("v1\n{}\n")
    (folder / "driver-0.log").write_text(f"26/11/26 18:00:00 WARN Something: shard {SHARD} of stream s looked odd\n")


def row(sequence: str) -> Dict[str, Any]:
    return {"shardId": SHARD, "sequenceNumber": sequence, "subSequenceNumber": 0}


def test_given_a_batch_run_again_with_the_same_offset_then_the_explanation_names_both_batches_and_says_so(
    tmp_path: Path,
) -> None:
    # Given Spark batches 0 and 1 carrying the same source offset (batch 7), each committing records 101 and 102,
    # then batch 2 reading record 103, while the stream also holds record 104, which no batch read
    lay_out_run(tmp_path, [
        {"offset": offset(7, "100"), "rows": [row("101"), row("102")]},
        {"offset": offset(7, "100"), "rows": [row("101"), row("102")]},
        {"offset": offset(8, "102"), "rows": [row("103")]},
    ])  # fmt: skip
    output = FileSinkOutput(tmp_path / "output")
    wanted = collections.Counter({(SHARD, s, 0): 1 for s in ("101", "102", "103", "104")})
    # When the verdict is explained
    text = explain(tmp_path, wanted, output.records(), [Fault(1, "storm", 0.0, 0)], output)
    # Then the shard's line counts what is missing and repeated, and the repeats name their batches and the cause
    assert f"shard {SHARD}: 1 missing, 2 repeated" in text
    assert "2 record(s) in batches [0, 1]: 101, 102" in text
    assert "batch 0 (source batch 7): starts at AFTER_SEQUENCE_NUMBER 100" in text
    assert "Spark batches [0, 1] carry the same source offset" in text
    assert "missing 104 .. 104; the last batch logged (2) has the shard at AFTER_SEQUENCE_NUMBER 102" in text
    assert "driver-0.log" in text and "looked odd" in text
