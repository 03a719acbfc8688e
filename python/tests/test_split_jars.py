"""The wheel's JAR split (python/tools/split_jars.py): what both lines hold byte for byte is stored once, and each
line's JAR with the shared one holds exactly its assembly."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Dict

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import split_jars  # noqa: E402


def jar(path: Path, entries: Dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2010, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith("daemon") else 0o644) << 16
            out.writestr(info, data)
    return path


def names(path: Path) -> Dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if not n.endswith("/")}


def test_given_two_assemblies_then_equal_entries_go_to_the_shared_jar_and_the_rest_to_each_line(
    tmp_path: Path,
) -> None:
    common = {"shaded/Sdk.class": b"sdk", "natives/linux/daemon": b"\x7fELF", "META-INF/LICENSE": b"Apache"}
    a = jar(tmp_path / "a.jar", {**common, "conn/Source.class": b"2.12", "conn/Only212.class": b"x"})
    b = jar(tmp_path / "b.jar", {**common, "conn/Source.class": b"2.13"})
    out = tmp_path / "out"
    out.mkdir()
    shared, line_a, line_b = split_jars.split(out, "9.9.9", {"2.12": a, "2.13": b})
    assert shared.name == "spark-kinesis-dependencies-9.9.9.jar"
    assert names(shared) == common
    # Each JAR states its licence, so the licence is in both line JARs too.
    assert names(line_a) == {"conn/Source.class": b"2.12", "conn/Only212.class": b"x", "META-INF/LICENSE": b"Apache"}
    assert names(line_b) == {"conn/Source.class": b"2.13", "META-INF/LICENSE": b"Apache"}
    with zipfile.ZipFile(shared) as z:
        assert (z.getinfo("natives/linux/daemon").external_attr >> 16) == 0o755, "attributes are copied as they are"
        assert "natives/linux/" in z.namelist(), "folders are kept for class loaders that list them"


def test_given_a_broken_split_then_it_refuses_to_return(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = jar(tmp_path / "a.jar", {"x.class": b"1", "y.class": b"same"})
    b = jar(tmp_path / "b.jar", {"x.class": b"2", "y.class": b"same"})
    monkeypatch.setattr(split_jars, "_entries", lambda *jars: {})
    with pytest.raises(ValueError, match="does not hold a.jar"):
        split_jars.split(tmp_path, "1.0", {"2.12": a, "2.13": b})
