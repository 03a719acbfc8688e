"""The Maven route: the coordinates build.sbt publishes (to a folder repository here, as to Maven Central in a release)
resolve with ``spark-submit --packages`` into a working connector, with nothing of pip's on the classpath."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable

import pyspark
from build_sbt import spark_test_version

import pyspark_kinesis
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY

ROOT = Path(__file__).resolve().parents[2]
#: Where build-wheel.sh (and bin/test's sbt run) publish with -Dsparkkinesis.publishTo.
REPOSITORY = Path(os.environ.get("SPARK_KINESIS_MAVEN_REPO", ROOT / "python" / "build" / "maven-repo"))
POM = "{http://maven.apache.org/POM/4.0.0}"


def scala() -> str:
    return "2.12" if pyspark.__version__.startswith("3.5.") else "2.13"


def artifact_dir() -> Path:
    return REPOSITORY / "io" / "github" / "spark-kinesis" / f"spark-kinesis_{scala()}" / pyspark_kinesis.__version__


def test_given_the_published_pom_then_it_has_what_maven_central_asks_and_no_transitive_dependencies() -> None:
    version = pyspark_kinesis.__version__
    base = artifact_dir() / f"spark-kinesis_{scala()}-{version}"
    for suffix in (".jar", ".pom", "-sources.jar", "-javadoc.jar"):
        assert Path(f"{base}{suffix}").is_file(), f"{base}{suffix} was not published"
    pom = ET.parse(f"{base}.pom").getroot()
    for field in ("name", "description", "url", "licenses/license/name", "scm/url", "developers/developer/name"):
        assert (pom.findtext(POM + field.replace("/", "/" + POM)) or "").strip(), f"the POM has no {field}"
    scopes = [d.findtext(POM + "scope") for d in pom.iter(POM + "dependency")]
    assert scopes and set(scopes) <= {"provided", "test"}, f"the POM brings dependencies along: {scopes}"


def test_given_the_coordinates_when_spark_submit_resolves_them_with_packages_then_a_stream_is_read(
    tmp_path: Path, endpoint: str, new_stream: Callable[[int], str], kinesis: Any
) -> None:
    stream = new_stream(1)
    kinesis.put_records(
        StreamName=stream, Records=[{"Data": f"r{i}".encode(), "PartitionKey": str(i)} for i in range(7)]
    )
    job = tmp_path / "job.py"
    job.write_text(
        textwrap.dedent(f"""
            from pyspark.sql import SparkSession
            spark = SparkSession.builder.master("local[1]").getOrCreate()
            df = (spark.read.format("aws-kinesis").option("kinesis.streamName", "{stream}")
                  .option("kinesis.region", "{REGION}").option("kinesis.endpointUrl", "{endpoint}")
                  .option("kinesis.awsAccessKeyId", "{ACCESS_KEY_ID}").option("kinesis.awsSecretKey", "{SECRET_KEY}")
                  .load())
            print("ROWS", sorted(r.data.decode() for r in df.select("data").collect()))
            print("JARS", spark.sparkContext.getConf().get("spark.jars", ""))
        """)
    )
    coordinates = f"io.github.spark-kinesis:spark-kinesis_{scala()}:{pyspark_kinesis.__version__}"
    submit = Path(sys.executable).parent / "spark-submit"
    out = subprocess.run(
        [str(submit), "--packages", coordinates, "--repositories", REPOSITORY.as_uri(),
         "--conf", f"spark.jars.ivy={tmp_path / 'ivy'}", "--conf", "spark.ui.enabled=false", str(job)],
        capture_output=True, text=True, timeout=300,
        # The pip package's Spark, run by this environment's Python (the venv need not be activated).
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_HOME": str(Path(pyspark.__file__).parent),
             "PYSPARK_PYTHON": sys.executable},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"ROWS {sorted(f'r{i}' for i in range(7))}" in out.stdout
    jars = next(line for line in out.stdout.splitlines() if line.startswith("JARS "))
    assert f"spark-kinesis_{scala()}-{pyspark_kinesis.__version__}.jar" in jars
    assert "site-packages" not in jars, "the connector must come from the coordinates, not from the wheel"


def test_given_an_sbt_project_with_the_coordinates_when_it_runs_a_read_then_the_stream_comes_back(
    tmp_path: Path, endpoint: str, new_stream: Callable[[int], str], kinesis: Any
) -> None:
    stream = new_stream(1)
    kinesis.put_records(StreamName=stream, Records=[{"Data": f"s{i}".encode(), "PartitionKey": "k"} for i in range(5)])
    # The main build's sbt launcher, with the folder repository in front of Maven Central.
    launcher = next((ROOT / "build").glob("sbt-launch-*.jar"))
    repositories = tmp_path / "repositories"
    repositories.write_text(f"[repositories]\n  local\n  folder: {REPOSITORY.as_uri()}\n  maven-central\n")
    build = (ROOT / "build.sbt").read_text()
    scala_version = re.search(rf'lazy val scala{scala().replace(".", "")} = "([\d.]+)"', build)
    assert scala_version, "build.sbt names no Scala version for this line"
    project = ROOT / "integration-tests" / "dependency-project"
    out = subprocess.run(
        ["java", "-Xmx1g", f"-Dsbt.repository.config={repositories}", "-Dsbt.override.build.repos=true",
         "-Dsbt.server.forcestart=false", "-Dsbt.supershell=false", "-Dsbt.ci=true",
         f"-Dsparkkinesis.version={pyspark_kinesis.__version__}",
         f"-Dsparkkinesis.scalaVersion={scala_version.group(1)}",
         f"-Dsparkkinesis.sparkVersion={spark_of_the_integration_tests()}",
         f"-Dsparkkinesis.jvmOptions={ROOT / 'build' / 'spark-jvm-options'}",
         "-jar", str(launcher), f"run {endpoint} {stream} {REGION} {ACCESS_KEY_ID} {SECRET_KEY}"],
        cwd=project, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert f"ROWS {','.join(f's{i}' for i in range(5))}" in out.stdout


def spark_of_the_integration_tests() -> str:
    """The Spark release build.sbt's integration tests run this line on (already in the dependency cache)."""
    return spark_test_version(scala())
