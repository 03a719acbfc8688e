"""A copy of the example pipeline (docs/examples/pipelines) in a folder of its own, run by pyspark's
``spark-pipelines`` command with the wheel's JARs on a persistent catalog (Hive's, a Derby metastore in the folder).

The example's files are used as they are; only its spec's storage and the configuration entries that name the
emulator's streams, endpoints and stores are set for the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import yaml

from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "pipelines"

LOG4J2 = """rootLogger.level = warn
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n
logger.kinesis.name = io.github.sparkkinesis
logger.kinesis.level = info
"""

# How long one run may take: a JVM with Hive's metastore, three flows, the sink's producer daemon, on a loaded machine.
RUN_TIMEOUT_S = 240


class PipelineProject:
    """The example pipeline copied to ``folder`` with ``source`` and ``sink`` options set in its configuration."""

    def __init__(self, folder: Path, source: Dict[str, str], sink: Dict[str, str]) -> None:
        self.folder = folder
        folder.mkdir(parents=True)
        (folder / "transformations").mkdir()
        for flow in (EXAMPLE / "transformations").iterdir():
            (folder / "transformations" / flow.name).write_bytes(flow.read_bytes())
        spec = yaml.safe_load((EXAMPLE / "spark-pipeline.yml").read_text())
        spec["storage"] = (folder / "storage").resolve().as_uri()
        spec["configuration"].update({f"kinesis.example.source.{k}": v for k, v in source.items()})
        spec["configuration"].update({f"kinesis.example.sink.{k}": v for k, v in sink.items()})
        (folder / "spark-pipeline.yml").write_text(yaml.safe_dump(spec))
        # Spark's own warnings and the connector's INFO lines in each run's log, so that a failed run says why.
        (folder / "conf").mkdir()
        (folder / "conf" / "log4j2.properties").write_text(LOG4J2)
        self.runs = 0

    def table(self, name: str) -> Path:
        """Where a table of the pipeline keeps its files: the Hive warehouse in the project folder."""
        return self.folder / "spark-warehouse" / name

    def log(self, run: int) -> str:
        """What run number ``run`` (from 1) printed."""
        return (self.folder / f"run-{run}.log").read_text(errors="replace")

    def run(self, *refresh: str) -> None:
        """Runs ``spark-pipelines run`` with ``refresh`` arguments (``--full-refresh orders``, ...) to its end.

        One run at a time on a machine: spark-pipelines' client connects to its local Spark Connect server on port
        15002 whatever port the server is given.
        """
        self.runs += 1
        PipelineRun(self, list(refresh), self.folder / f"run-{self.runs}.log").wait()


class PipelineRun:
    """One ``spark-pipelines run`` in a process group of its own; :meth:`wait` bounds it."""

    def __init__(self, project: PipelineProject, refresh: List[str], log: Path) -> None:
        import pyspark_kinesis

        venv_bin = str(Path(sys.executable).parent)
        env = dict(
            os.environ,
            # spark-pipelines finds pyspark and its Python through the PATH of the virtual environment.
            PATH=venv_bin + os.pathsep + os.environ.get("PATH", ""),
            PYSPARK_PYTHON=sys.executable,
            # The source, the sink's producer and the DynamoDB store take the default credentials chain's.
            AWS_ACCESS_KEY_ID=ACCESS_KEY_ID,
            AWS_SECRET_ACCESS_KEY=SECRET_KEY,
            AWS_REGION=REGION,
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_CONF_DIR=str(project.folder / "conf"),
        )
        command = [
            str(Path(venv_bin) / "spark-pipelines"),
            "run",
            *refresh,
            "--jars",
            pyspark_kinesis.jar_path(),
            "--conf",
            "spark.sql.catalogImplementation=hive",
        ]
        self.log = log
        self.what = f"spark-pipelines run {' '.join(refresh)} in {project.folder}"
        with log.open("w") as out:
            # Derby's metastore_db and derby.log land in the working directory: the project folder.
            self.process = subprocess.Popen(
                command, cwd=project.folder, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait(self, timeout: float = RUN_TIMEOUT_S) -> None:
        """Waits for the run to end; fails with the end of its log if it fails or outlives ``timeout``."""
        try:
            code: Optional[int] = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait(30)
            code = None
        if code != 0:
            tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-60:])
            outcome = f"exited with {code}" if code is not None else f"did not end within {timeout} s"
            raise AssertionError(f"{self.what} {outcome}; the end of {self.log}:\n{tail}")
