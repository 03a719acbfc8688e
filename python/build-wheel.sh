#!/usr/bin/env bash
# Builds the pyspark-kinesis wheel into python/dist/: both shaded connector JARs (Spark 3.5 / Scala 2.12 and
# Spark 4.x / Scala 2.13), the options registry's JSON description turned into the typed option builders, and
# the version from the repository's VERSION file, then the wheel itself (hatchling, fetched from PyPI by pip).
#   python/build-wheel.sh            prints the wheel's path as its last line
# With SPARK_KINESIS_SKIP_SBT=1 it skips the sbt step: the caller (bin/test) built both JARs and the options JSON
# (python/build/options.json) in its own sbt run.
set -euo pipefail
python_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$python_dir/.." && pwd)"
package="$python_dir/src/pyspark_kinesis"
python="${PYTHON:-python3}"
version="$(tr -d '[:space:]' < "$root/VERSION")"

command -v "$python" >/dev/null || { echo "build-wheel.sh: $python not found; install Python 3.9 or newer" >&2; exit 1; }
mkdir -p "$python_dir/build"
cd "$root"
[ "${SPARK_KINESIS_SKIP_SBT:-}" = 1 ] || build/sbt +connector/assembly \
  "connector/runMain io.github.sparkkinesis.options.OptionsDocs --json $python_dir/build/options.json" >&2
[ -f "$python_dir/build/options.json" ] || { echo "build-wheel.sh: $python_dir/build/options.json was not built" >&2; exit 1; }

rm -rf "$package/jars"
mkdir -p "$package/jars"
for scala in 2.12 2.13; do
  jar="connector/target/scala-$scala/spark-kinesis-assembly_$scala-$version.jar"
  [ -f "$jar" ] || { echo "build-wheel.sh: $jar was not built" >&2; exit 1; }
  cp "$jar" "$package/jars/"
done
printf '__version__ = "%s"\n' "$version" > "$package/_version.py"
"$python" "$python_dir/tools/generate_options.py" "$python_dir/build/options.json" "$package" >&2

# pip from a virtual environment of the build's own: a system Python need not have pip installed.
build_venv="$python_dir/build/venv"
[ -x "$build_venv/bin/pip" ] || "$python" -m venv "$build_venv" >&2 ||
  { echo "build-wheel.sh: $python cannot create a virtual environment; install python3-venv" >&2; exit 1; }
rm -rf "$python_dir/dist"
"$build_venv/bin/pip" wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$python_dir/dist" "$python_dir" >&2
wheel="$(ls "$python_dir"/dist/pyspark_kinesis-"$version"-*.whl)"
size=$(stat -c %s "$wheel")
# Each JAR carries the Kinesis Producer Library's native daemons (Linux x86_64 and aarch64, macOS), so the wheel is
# over PyPI's default limit of 100 MB per file: publishing it needs the project's limit raised. The hard limit
# here catches a build that packed something twice.
mb=$((1024 * 1024))
[ "$size" -lt $((250 * mb)) ] || { echo "build-wheel.sh: $wheel is $size bytes, over 250 MB" >&2; exit 1; }
[ "$size" -lt $((100 * mb)) ] ||
  echo "build-wheel.sh: warning: $wheel is $((size / mb)) MB, over PyPI's default 100 MB per file" >&2
echo "build-wheel.sh: built $wheel ($((size / mb)) MB)" >&2
echo "$wheel"
