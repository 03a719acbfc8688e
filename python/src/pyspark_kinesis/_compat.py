"""What this release supports and what the tests run it on: the one source for the JAR chosen for a pyspark, for
``python -m pyspark_kinesis info``, for the README's compatibility table and for the wheel's Python classifiers (the
tests compare the README, the classifiers, build.sbt's test versions and python/pyspark-versions with it)."""

from __future__ import annotations

from typing import NamedTuple, Tuple


class SparkLine(NamedTuple):
    """One connector JAR: the Spark releases (major.minor) it runs on, its Scala version, the Java versions."""

    releases: Tuple[str, ...]
    scala: str
    java: Tuple[str, ...]
    tested: str

    @property
    def spark(self) -> str:
        """The releases as people write them: ``3.5.x`` or ``4.0 - 4.3``."""
        return f"{self.releases[0]}.x" if len(self.releases) == 1 else f"{self.releases[0]} - {self.releases[-1]}"


SPARK_LINES: Tuple[SparkLine, ...] = (
    SparkLine(
        releases=("3.5",),
        scala="2.12",
        java=("17",),
        tested="Spark 3.5.8 (integration smoke, Java 17); pyspark 3.5.9 (Python smoke)",
    ),
    SparkLine(
        releases=("4.0", "4.1", "4.2", "4.3"),
        scala="2.13",
        java=("17", "21"),
        tested="Spark 4.2.0 (integration, Java 17); Spark 4.1.1 (real-time mode); Spark 4.0.0 (integration smoke, "
        "Java 21); pyspark 4.3.0 (Python)",
    ),
)

#: The Python versions the package supports: pure Python on the standard library, from pyspark 3.5's oldest up.
PYTHON_VERSIONS: Tuple[str, ...] = ("3.9", "3.10", "3.11", "3.12", "3.13")


def line_of(spark_version: str) -> SparkLine:
    """The line whose JAR runs on a Spark release (``"3.5.2"``, ``"4.1"``); KeyError when none does."""
    release = ".".join(spark_version.split(".")[:2])
    for line in SPARK_LINES:
        if release in line.releases:
            return line
    raise KeyError(spark_version)


def supported_text() -> str:
    """The supported pyspark releases in one phrase, for error messages."""
    parts = [f"{line.spark.replace(' - ', ' to ')} (Scala {line.scala} JAR)" for line in SPARK_LINES]
    return "pyspark " + " and ".join(parts)


def markdown_table() -> str:
    """The README's compatibility table, one row per JAR."""
    rows = [
        "| Spark | Scala | Java | Python | Tested by bin/test on |",
        "|---|---|---|---|---|",
    ]
    python = f"{PYTHON_VERSIONS[0]} - {PYTHON_VERSIONS[-1]}"
    for line in SPARK_LINES:
        rows.append(f"| {line.spark} | {line.scala} | {', '.join(line.java)} | {python} | {line.tested} |")
    return "\n".join(rows)
