"""The connector JARs inside this package, and attaching the right one to a Spark session."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Set

from ._compat import SPARK_LINES, supported_text
from ._version import __version__

#: The connector's SparkSessionExtensions, which registers the payload functions as SQL functions.
SQL_EXTENSIONS = "io.github.sparkkinesis.KinesisSqlExtensions"

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
    ``spark.jars`` so that executors get it too; jars already set on the builder are kept. A Spark Connect builder
    for a local server (``remote("local[*]")``) gets them the same way, as that server's ``spark.jars``. Adds the
    connector's SQL extension to ``spark.sql.extensions`` (after any already set), which registers the payload
    functions (``cloudwatch_logs``, ``from_glue_schema_registry``, ...) as SQL functions: for ``spark.sql(...)`` and
    for Spark Connect clients.

    :param builder: ``SparkSession.builder``, possibly already configured.
    :returns: the same builder, for chaining.
    :raises TypeError: when ``builder`` is not a ``pyspark.sql.SparkSession.Builder``.
    :raises ValueError: when the installed pyspark is not a supported version, or the builder is for a remote Spark
        Connect server (``remote("sc://...")``: there, call :func:`attach_kinesis` on the session once created).

    The JAR is attached when the session starts: if a session is already running, ``getOrCreate()`` returns it
    unchanged, so call this before the first session of the process.

    Example::

        from pyspark.sql import SparkSession
        from pyspark_kinesis import configure_spark_with_kinesis

        spark = configure_spark_with_kinesis(SparkSession.builder.appName("orders")).getOrCreate()
        # or a local Spark Connect server, started by pyspark with the JARs:
        spark = configure_spark_with_kinesis(SparkSession.builder.remote("local[*]")).getOrCreate()
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
    remote = options.get("spark.remote")
    if remote is not None and not str(remote).startswith("local"):
        raise ValueError(
            f"This builder is for the remote Spark Connect server {remote}, whose JARs the builder cannot set. Create "
            "the session, then add the connector to it: spark = attach_kinesis(builder.getOrCreate()) (from "
            'pyspark_kinesis), or start the server with --jars "$(python -m pyspark_kinesis jar)" (and, for the '
            f"payload functions, --conf spark.sql.extensions={SQL_EXTENSIONS})."
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
    extensions = [e.strip() for e in options.get("spark.sql.extensions", "").split(",") if e.strip()]
    extensions += [] if SQL_EXTENSIONS in extensions else [SQL_EXTENSIONS]
    return builder.config("spark.jars", ",".join(jars)).config("spark.sql.extensions", ",".join(extensions))


#: The Spark Connect sessions (by session id) attach_kinesis added the connector to, in this process.
_attached_sessions: Set[str] = set()


def attach_kinesis(spark: "SparkSession") -> "SparkSession":
    """Adds the connector to a Spark Connect session that is already running: uploads the JARs matching the
    server's Spark version into the session with ``spark.addArtifacts``. For a remote server (``remote("sc://...")``)
    that was not started with the connector. Calling it again for the same session does nothing, and so does a call
    for a server that has the connector on its ``spark.jars`` (``--jars``, or :func:`configure_spark_with_kinesis`).

    Reads, writes and each query's progress metrics work through artifacts. Spark's UI cannot load classes from a
    session's artifacts: the connector then leaves its task metrics out of the SQL tab (the server logs one warning).
    Start the server with ``--jars "$(python -m pyspark_kinesis jar)"`` to have them too.

    :param spark: a Spark Connect session (``pyspark.sql.connect.session.SparkSession``).
    :returns: the same session, for chaining.
    :raises TypeError: when ``spark`` is not a SparkSession.
    :raises ValueError: for a classic (non-Connect) session, which takes the JARs when it starts
        (:func:`configure_spark_with_kinesis`), or when this package has no JAR for the server's Spark version.

    Example::

        from pyspark.sql import SparkSession
        from pyspark_kinesis import attach_kinesis

        spark = attach_kinesis(SparkSession.builder.remote("sc://spark-connect.example.com:15002").getOrCreate())
        events = spark.readStream.format("aws-kinesis").option("kinesis.streamName", "orders").load()
    """
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except ImportError:
        ConnectSession = None  # Spark Connect's client dependencies are missing: no session can be one.
    if ConnectSession is None or not isinstance(spark, ConnectSession):
        _refuse_non_connect(spark)
    if spark.session_id in _attached_sessions:
        return spark
    server_jars = [Path(j.strip()).name for j in (spark.conf.get("spark.jars", "") or "").split(",") if j.strip()]
    if not any(name.startswith("spark-kinesis-") for name in server_jars):
        spark.addArtifacts(*jar_paths(spark.version))
    _attached_sessions.add(spark.session_id)
    return spark


def _refuse_non_connect(spark: object) -> None:
    """Raises the error for a session attach_kinesis cannot add JARs to: a classic session, or no session."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        _installed_pyspark_version()
        raise
    if not isinstance(spark, SparkSession):
        raise TypeError(
            f"attach_kinesis expects a Spark Connect SparkSession (from SparkSession.builder.remote(...)"
            f".getOrCreate()), not {type(spark).__name__}."
        )
    jars = spark.sparkContext.getConf().get("spark.jars") or ""
    if all(jar in jars for jar in jar_paths()):
        raise ValueError(
            "attach_kinesis is for Spark Connect sessions; this classic session already has the connector on its "
            "spark.jars, so it needs nothing more."
        )
    raise ValueError(
        "attach_kinesis is for Spark Connect sessions; a classic session takes the connector JARs when it starts: "
        "build it with configure_spark_with_kinesis(SparkSession.builder).getOrCreate() (from pyspark_kinesis), "
        'or pass --jars "$(python -m pyspark_kinesis jar)" to spark-submit.'
    )
