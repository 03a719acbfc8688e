"""What a release carries: the licence files in the wheel and its JARs, metadata PyPI accepts, a wheel under 60 MB
with every KPL daemon once, the ``info`` command, and one source for what is supported."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import List

import pyspark
import pytest
from build_sbt import spark_oldest_version, spark_test_version

import pyspark_kinesis
from pyspark_kinesis import jar_paths
from pyspark_kinesis._compat import PYTHON_VERSIONS, SPARK_LINES, line_of, markdown_table

ROOT = Path(__file__).resolve().parents[2]
DAEMONS = [
    f"amazon-kinesis-producer-native-binaries/{p}/kinesis_producer" for p in ("linux-x86_64", "linux-aarch64", "osx")
]


def built_wheel() -> Path:
    wheels = sorted((ROOT / "python" / "dist").glob(f"pyspark_kinesis-{pyspark_kinesis.__version__}-*.whl"))
    assert len(wheels) == 1, f"expected the one wheel run-tests.sh tested in python/dist, found {wheels}"
    return wheels[0]


def all_jars() -> List[Path]:
    return sorted((Path(pyspark_kinesis.__file__).parent / "jars").glob("*.jar"))


def test_given_the_installed_wheel_then_it_carries_the_projects_license_and_notice() -> None:
    files = importlib.metadata.distribution("pyspark-kinesis").files or []
    licences = {f.name: f for f in files if "licenses" in f.parts}
    assert sorted(licences) == ["LICENSE", "NOTICE"]
    assert licences["LICENSE"].read_text() == (ROOT / "LICENSE").read_text()
    assert licences["NOTICE"].read_text() == (ROOT / "NOTICE").read_text()


def test_given_each_jar_of_the_wheel_then_its_meta_inf_holds_the_license_and_notice() -> None:
    for path in all_jars():
        with zipfile.ZipFile(path) as jar:
            assert jar.read("META-INF/LICENSE").decode() == (ROOT / "LICENSE").read_text(), path.name
            assert jar.read("META-INF/NOTICE").decode() == (ROOT / "NOTICE").read_text(), path.name


def test_given_the_wheel_then_it_is_under_60_mb_with_each_kpl_daemon_once() -> None:
    wheel = built_wheel()
    assert wheel.stat().st_size < 60 * 1000 * 1000, f"{wheel.name} is {wheel.stat().st_size} bytes"
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    for path in all_jars():
        with zipfile.ZipFile(path) as jar:
            found = [d for d in DAEMONS if d in jar.namelist()]
            # Every daemon in the shared JAR (the KPL marks its copy executable when it extracts it); none in a line's.
            assert found == (DAEMONS if path.name.startswith("spark-kinesis-dependencies-") else []), path.name
            assert not [n for n in jar.namelist() if n.endswith(".zip")], "the KPL never reads its macOS zip"
    assert len([n for n in names if n.endswith(".jar")]) == 3


def test_given_each_spark_line_then_its_two_jars_register_the_format_and_hold_the_kpl() -> None:
    for line in SPARK_LINES:
        names = set()
        for path in jar_paths(f"{line.releases[0]}.0"):
            with zipfile.ZipFile(path) as jar:
                names.update(jar.namelist())
        assert "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister" in names
        assert "io/github/sparkkinesis/KinesisSourceProvider.class" in names
        assert "io/github/sparkkinesis/shaded/kpl/KinesisProducer.class" in names


def test_given_the_wheel_metadata_then_pypi_gets_urls_classifiers_and_the_licence() -> None:
    meta = importlib.metadata.metadata("pyspark-kinesis")
    assert meta["License-Expression"] == "Apache-2.0"
    classifiers = meta.get_all("Classifier") or []
    python = re.compile(r"Programming Language :: Python :: (3\.\d+)$")
    listed = [m.group(1) for m in map(python.match, classifiers) if m]
    assert listed == list(PYTHON_VERSIONS)
    assert meta["Requires-Python"] == f">={PYTHON_VERSIONS[0]}"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    homepage = re.search(r'homepage := Some\(url\("([^"]+)"\)\)', (ROOT / "build.sbt").read_text())
    assert homepage and urls["Homepage"] == homepage.group(1) and urls["Source"] == homepage.group(1)
    assert meta["Description-Content-Type"] == "text/markdown"


def test_given_the_built_wheel_when_twine_checks_it_then_pypi_would_render_its_description() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built_wheel())], capture_output=True, text=True
    )
    assert out.returncode == 0 and "PASSED" in out.stdout, out.stdout + out.stderr


def test_given_the_info_command_then_it_prints_the_version_the_jars_and_every_supported_line() -> None:
    out = subprocess.run([sys.executable, "-m", "pyspark_kinesis", "info"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith(f"pyspark-kinesis {pyspark_kinesis.__version__}\n")
    assert f"pyspark {pyspark.__version__}: attaches {', '.join(jar_paths())}" in out.stdout
    for line in SPARK_LINES:
        assert f"Spark {line.spark} | Scala {line.scala} | Java {', '.join(line.java)} |" in out.stdout


def test_given_the_readme_then_its_compatibility_table_is_the_packages() -> None:
    assert markdown_table() in (ROOT / "README.md").read_text()


def test_given_the_versions_the_tests_run_then_each_is_in_the_table() -> None:
    listed = [v for v in (ROOT / "python" / "pyspark-versions").read_text().split() if not v.startswith("#")]
    tested_pyspark = [v for v in listed if re.fullmatch(r"\d+\.\d+\.\d+", v)]
    assert tested_pyspark, "python/pyspark-versions lists no version"
    for version in tested_pyspark:
        assert f"pyspark {version}" in line_of(version).tested
    # The releases each line's integration tests run on, and the oldest Spark 4 the 2.13 JAR runs on (bin/test's
    # Java 21 smoke run).
    for version in [spark_test_version("2.12"), spark_test_version("2.13"), spark_oldest_version("2.13")]:
        assert f"Spark {version} " in line_of(version).tested


@pytest.mark.parametrize("version", ["3.4.1", "5.0.0"])
def test_given_a_spark_release_no_line_supports_then_line_of_refuses_it(version: str) -> None:
    with pytest.raises(KeyError):
        line_of(version)


def test_given_the_readmes_then_every_release_version_they_name_is_the_version_file() -> None:
    version = (ROOT / "VERSION").read_text().strip()
    assert pyspark_kinesis.__version__ == version
    for readme in (ROOT / "README.md", ROOT / "python" / "README.md", *sorted((ROOT / "docs").glob("*.md"))):
        text = readme.read_text()
        named = re.findall(r"_2\.1[23][-:](\d+\.\d+\.\d+)", text)
        named += re.findall(r'"spark-kinesis" % "(\d+\.\d+\.\d+)"', text)
        named += re.findall(r"pyspark_kinesis-(\d+\.\d+\.\d+)-py3", text)
        assert set(named) <= {version}, f"{readme.name} names {sorted(set(named))}, the VERSION file {version}"
    assert re.findall(r"_2\.1[23][-:](\d+\.\d+\.\d+)", (ROOT / "README.md").read_text()), "no coordinates found"
