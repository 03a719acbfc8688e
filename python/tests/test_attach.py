"""Attaching the JAR: which JAR for which pyspark, the builder, the errors, and the JAR's path for spark-submit."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pyspark
import pytest
from pyspark.sql import SparkSession

import pyspark_kinesis
from pyspark_kinesis import attach_kinesis, configure_spark_with_kinesis, jar_path, jar_paths


def expected_scala() -> str:
    return "2.12" if pyspark.__version__.startswith("3.5.") else "2.13"


def test_given_the_installed_pyspark_then_the_jars_of_its_scala_line_are_chosen() -> None:
    version = pyspark_kinesis.__version__
    line, shared = (Path(p) for p in jar_paths())
    assert line.is_file() and shared.is_file()
    assert line.name == f"spark-kinesis-connector_{expected_scala()}-{version}.jar"
    assert shared.name == f"spark-kinesis-dependencies-{version}.jar"
    assert jar_path() == f"{line},{shared}"
    assert Path(jar_paths("3.5.0")[0]).name.startswith("spark-kinesis-connector_2.12-")
    assert Path(jar_paths("4.0.1")[0]).name.startswith("spark-kinesis-connector_2.13-")
    assert jar_paths("3.5.0")[1] == jar_paths("4.0.1")[1] == str(shared)


def test_given_the_wheel_then_its_jars_carry_the_packages_version() -> None:
    jars = sorted(p.name for p in (Path(pyspark_kinesis.__file__).parent / "jars").glob("*.jar"))
    version = pyspark_kinesis.__version__
    assert jars == [
        f"spark-kinesis-connector_2.12-{version}.jar",
        f"spark-kinesis-connector_2.13-{version}.jar",
        f"spark-kinesis-dependencies-{version}.jar",
    ]
    properties = ""
    for path in jar_paths():
        with zipfile.ZipFile(path) as jar:
            if "io/github/sparkkinesis/version.properties" in jar.namelist():
                properties = jar.read("io/github/sparkkinesis/version.properties").decode()
    assert properties.strip() == f"version={version}"


@pytest.mark.parametrize("version", ["3.4.1", "2.4.8", "5.0.0", "4.9.0", "not-a-version"])
def test_given_an_unsupported_spark_version_then_the_error_lists_the_supported_ones(version: str) -> None:
    with pytest.raises(ValueError) as raised:
        jar_path(version)
    assert f"no connector JAR for Spark {version}" in str(raised.value)
    assert "3.5.x (Scala 2.12 JAR) and 4.0 to 4.3 (Scala 2.13 JAR)" in str(raised.value)


def test_given_a_missing_jar_then_the_error_says_how_to_get_it(monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.setattr(pyspark_kinesis._spark, "_JARS", tmp_path)
    with pytest.raises(FileNotFoundError, match="is missing: .* Reinstall pyspark-kinesis"):
        jar_path("3.5.1")


def test_given_a_builder_with_jars_and_extensions_then_the_connector_and_its_extension_are_appended_once() -> None:
    builder = SparkSession.Builder().config("spark.jars", "/opt/jars/a.jar,/opt/jars/b.jar")
    builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    configure_spark_with_kinesis(configure_spark_with_kinesis(builder))
    assert builder._options["spark.jars"] == f"/opt/jars/a.jar,/opt/jars/b.jar,{jar_path()}"
    assert len(builder._options["spark.jars"].split(",")) == 4
    assert builder._options["spark.sql.extensions"] == (
        "io.delta.sql.DeltaSparkSessionExtension,io.github.sparkkinesis.KinesisSqlExtensions"
    )


def test_given_something_else_than_a_builder_then_type_error_says_what_is_expected() -> None:
    with pytest.raises(TypeError, match="expects SparkSession.builder .* not dict; it supports pyspark 3.5.x"):
        configure_spark_with_kinesis({})  # type: ignore[arg-type]


def test_given_a_remote_spark_connect_builder_then_it_is_refused_with_a_pointer_to_attach_kinesis() -> None:
    builder = SparkSession.Builder().config("spark.remote", "sc://localhost")
    with pytest.raises(ValueError, match=r"remote Spark Connect server sc://localhost.*attach_kinesis\(builder"):
        configure_spark_with_kinesis(builder)


def test_given_a_local_spark_connect_builder_then_its_server_gets_the_jars() -> None:
    builder = SparkSession.Builder().config("spark.remote", "local[2]")
    configured = configure_spark_with_kinesis(builder)._options
    assert configured["spark.jars"] == jar_path()
    assert configured["spark.sql.extensions"] == "io.github.sparkkinesis.KinesisSqlExtensions"


def test_given_something_else_than_a_session_then_attach_kinesis_says_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"expects a Spark Connect SparkSession .* not str"):
        attach_kinesis("sc://localhost")  # type: ignore[arg-type]


def test_given_a_classic_session_then_attach_kinesis_says_it_needs_nothing_or_how_to_attach(
    spark: Any, monkeypatch: Any
) -> None:
    # The tests' classic session has the JARs already
    with pytest.raises(ValueError, match="classic session already has the connector on its spark.jars"):
        attach_kinesis(spark)
    # One without them is told to use configure_spark_with_kinesis
    monkeypatch.setattr(pyspark_kinesis._spark, "jar_paths", lambda version=None: ["/elsewhere/connector.jar"])
    with pytest.raises(ValueError, match=r"configure_spark_with_kinesis\(SparkSession.builder\).getOrCreate\(\)"):
        attach_kinesis(spark)


def test_given_the_session_then_the_connector_is_on_its_classpath(spark: Any) -> None:
    assert all(jar in spark.sparkContext.getConf().get("spark.jars") for jar in jar_paths())
    with pytest.raises(Exception, match="Option kinesis.streamName is required"):
        spark.readStream.format("aws-kinesis").load()


def test_given_the_command_line_then_it_prints_the_jar_path_and_the_version() -> None:
    out = subprocess.run([sys.executable, "-m", "pyspark_kinesis", "jar"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == jar_path()
    out = subprocess.run(
        [sys.executable, "-m", "pyspark_kinesis", "jar", "--spark-version", "3.3.0"], capture_output=True, text=True
    )
    assert out.returncode == 1 and "supports pyspark 3.5.x" in out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "pyspark_kinesis", "version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == pyspark_kinesis.__version__


def test_given_the_package_then_it_is_typed_and_exports_its_api() -> None:
    package = Path(pyspark_kinesis.__file__).parent
    assert (package / "py.typed").is_file()
    assert sorted(pyspark_kinesis.__all__) == sorted(
        [
            "KinesisSinkOptions",
            "KinesisSourceOptions",
            "SUPPORTED_SPARK_LINES",
            "__version__",
            "attach_kinesis",
            "configure_spark_with_kinesis",
            "data_as_json",
            "data_as_text",
            "jar_path",
            "jar_paths",
            "kinesis_foreach",
            "parse_json_payload",
        ]
    )
    assert "site-packages" in str(package), "the tests must run against the installed wheel"
