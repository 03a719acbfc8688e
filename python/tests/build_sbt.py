"""What the tests read from build.sbt: the Spark releases its integration tests run on."""

from __future__ import annotations

import re
from pathlib import Path

BUILD = Path(__file__).resolve().parents[2] / "build.sbt"


def _case(function: str, scala_binary: str) -> str:
    """The release ``def <function>(scalaBinary)`` gives for a Scala line (its ``case "2.12"`` or ``case _``)."""
    body = re.search(
        rf"def {function}\(scalaBinary: String\): String = scalaBinary match \{{(.*?)\n\}}", BUILD.read_text(), re.S
    )
    assert body, f"build.sbt has no def {function}"
    pattern = r'case "2\.12" => "([\d.]+)"' if scala_binary == "2.12" else r'case _ => "([\d.]+)"'
    found = re.search(pattern, body.group(1))
    assert found, f"build.sbt's {function} names no release for Scala {scala_binary}"
    return found.group(1)


def spark_test_version(scala_binary: str) -> str:
    """The Spark release the integration tests of a Scala line compile against and run on by default."""
    return _case("sparkTestCompileVersion", scala_binary)


def spark_oldest_version(scala_binary: str) -> str:
    """The oldest Spark release a line's JAR runs on (bin/test's smoke run on Java 21 uses the Scala 2.13 one)."""
    return _case("sparkOldestVersion", scala_binary)
