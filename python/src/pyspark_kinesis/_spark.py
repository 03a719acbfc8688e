"""The connector JARs inside this package, and attaching the right one to a Spark session."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional

from ._compat import SPARK_LINES, supported_text
from ._version import __version__

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The Spark lines this package has a JAR for (major.minor), and the Scala version each JAR is built with.
SUPPORTED_SPARK_LINES: Dict[str, str] = {release: line.scala for line in SPARK_LINES for release in line.releases}

SUPPORTED_TEXT = supported_text()

_JARS = Path(__file__).resolve().parent / "jars"


def _installed_pyspark_version() -> str:
    try:
        import pyspark
    except ImportError:
        raise ImportError(
            "pyspark is not installed in this Python environment: install a supported version "
            f"({SUPPORTED_TEXT}), for example 'pip install pyspark==3.5.*', or pass spark_version=... to jar_path()."
        ) from None
    return pyspark.__version__


def jar_path(spark_version: Optional[str] = None) -> str:
    """The connector's JARs for a Spark version as ``spark-submit --jars`` and ``spark.jars`` take them: two paths,
    comma-separated (see :func:`jar_paths`).

    :param spark_version: a Spark version such as ``"3.5.2"`` or ``"4.0"``; by default the installed pyspark's.
    :raises ValueError: for a Spark version this package has no JAR for (the message lists those it has).
    :raises FileNotFoundError: when a JAR is missing from the installation.

    Example::

        spark-submit --jars "$(python -m pyspark_kinesis jar)" my_job.py

    >>> jar_path("3.5.1").split(",")[0].endswith("spark-kinesis-connector_2.12-" + __version__ + ".jar")
    True
    """
    return ",".join(jar_paths(spark_version))


def jar_paths(spark_version: Optional[str] = None) -> List[str]:
    """The paths of the two JARs that together are the connector for a Spark version: its Spark line's classes,
    and the relocated dependencies with the KPL's native daemons, which both lines share (so the wheel holds them
    once). Together they hold exactly the release's shaded assembly JAR; for a cluster's library settings, which
    take one file, use that JAR (Maven Central or the release).

    :param spark_version: a Spark version such as ``"3.5.2"`` or ``"4.0"``; by default the installed pyspark's.
    :raises ValueError: for a Spark version this package has no JAR for (the message lists those it has).
    :raises FileNotFoundError: when a JAR is missing from the installation.
    """
    version = spark_version if spark_version is not None else _installed_pyspark_version()
    if not isinstance(version, str):
        raise TypeError(f"spark_version must be a str such as '3.5.2', not {type(version).__name__}")
    match = re.match(r"(\d+)\.(\d+)(?:[.+-]|$)", version.strip())
    line = f"{match.group(1)}.{match.group(2)}" if match else None
    if line not in SUPPORTED_SPARK_LINES:
        raise ValueError(
            f"pyspark-kinesis {__version__} has no connector JAR for Spark {version}; it supports {SUPPORTED_TEXT}."
        )
    scala = SUPPORTED_SPARK_LINES[line]
    jars = [
        _JARS / f"spark-kinesis-connector_{scala}-{__version__}.jar",
        _JARS / f"spark-kinesis-dependencies-{__version__}.jar",
    ]
    for jar in jars:
        if not jar.is_file():
            raise FileNotFoundError(
                f"The connector JAR for Spark {line} (Scala {scala}) is missing: {jar} does not exist. Reinstall "
                "pyspark-kinesis, or build it with python/build-wheel.sh when working from the repository."
            )
    return [str(jar) for jar in jars]


def configure_spark_with_kinesis(builder: "SparkSession.Builder") -> "SparkSession.Builder":
    """Attaches the connector JARs that match the installed pyspark to a session builder, through
    ``spark.jars`` so that executors get it too; jars already set on the builder are kept.

    :param builder: ``SparkSession.builder``, possibly already configured.
    :returns: the same builder, for chaining.
    :raises TypeError: when ``builder`` is not a ``pyspark.sql.SparkSession.Builder``.
    :raises ValueError: when the installed pyspark is not a supported version, or the builder is for Spark
        Connect (there, the JAR belongs on the server: see :func:`jar_path`).

    The JAR is attached when the session starts: if a session is already running, ``getOrCreate()`` returns it
    unchanged, so call this before the first session of the process.

    Example::

        from pyspark.sql import SparkSession
        from pyspark_kinesis import configure_spark_with_kinesis

        spark = configure_spark_with_kinesis(SparkSession.builder.appName("orders")).getOrCreate()
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        _installed_pyspark_version()
        raise
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(
            "configure_spark_with_kinesis expects SparkSession.builder (a pyspark.sql.SparkSession.Builder), not "
            f"{type(builder).__name__}; it supports {SUPPORTED_TEXT}."
        )
    options: Dict[str, str] = getattr(builder, "_options", {})
    if "spark.remote" in options:
        raise ValueError(
            "This builder is for Spark Connect: a client cannot attach JARs to the server. Add the connector JAR "
            "to the Spark Connect server instead (pyspark_kinesis.jar_path() gives its path)."
        )
    ours = jar_paths()
    jars = [j for j in options.get("spark.jars", "").split(",") if j.strip()]
    jars += [jar for jar in ours if jar not in jars]
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None and ours[0] not in (active.getConf().get("spark.jars") or ""):
        warnings.warn(
            "A SparkContext is already running, so the connector JAR attached now takes effect only in a session "
            "started after it stops. Call configure_spark_with_kinesis before the first getOrCreate().",
            stacklevel=2,
        )
    return builder.config("spark.jars", ",".join(jars))
