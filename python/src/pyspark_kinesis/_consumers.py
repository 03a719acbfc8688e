"""``python -m pyspark_kinesis consumers``: the connector's consumers tool, a JVM program in its JAR, run on the
installed pyspark's JARs. It lists a stream's enhanced fan-out consumers with the query (checkpoint) that holds each,
and prunes those no checkpoint holds. Everything it decides is the connector's own code (its Kinesis client, options
and checkpoint files, Hadoop's file systems); this module only finds Java and the class path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

from ._spark import jar_paths

#: The tool's main class in the connector JAR.
MAIN_CLASS = "io.github.sparkkinesis.tools.ConsumersCli"


def class_path() -> str:
    """The connector's JARs for the installed pyspark, Spark's own JARs, and ``HADOOP_CONF_DIR`` when it is set (so
    that checkpoints on HDFS or S3 are read with the cluster's settings)."""
    import pyspark

    entries = jar_paths(pyspark.__version__) + [str(Path(pyspark.__file__).resolve().parent / "jars" / "*")]
    hadoop_conf = os.environ.get("HADOOP_CONF_DIR")
    if hadoop_conf:
        entries.append(hadoop_conf)
    return os.pathsep.join(entries)


def java() -> str:
    """``$JAVA_HOME/bin/java``, else ``java`` on the PATH, as pyspark finds Java."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        raise FileNotFoundError(
            "Java is needed to run the consumers tool (as it is for pyspark): set JAVA_HOME, or put java on the PATH."
        )
    return found


def run(args: List[str]) -> int:
    """Runs the tool with ``args`` (``list|prune --stream ...``, see ``--help``); returns its exit code."""
    try:
        command = [java(), "-cp", class_path(), MAIN_CLASS, *args]
    except (ImportError, ValueError, FileNotFoundError) as e:
        print(f"pyspark_kinesis consumers: {e}", file=sys.stderr)
        return 1
    return subprocess.call(command)
