#!/usr/bin/env bash
# Builds the pyspark-kinesis wheel into python/dist/: both shaded connector JARs (Spark 3.5 / Scala 2.12 and
# Spark 4.x / Scala 2.13) split into each line's own classes and one JAR of what both hold byte for byte (the
# relocated dependencies and the KPL's native daemons, so the wheel stores them once: tools/split_jars.py), the
# options registry's JSON description turned into the typed option builders, the version from the repository's
# VERSION file and its LICENSE and NOTICE, then the wheel itself (hatchling, fetched from PyPI by pip). Only a wheel
# is built: an sdist could not build the JARs without sbt and a JDK, and the one wheel serves every platform.
#   python/build-wheel.sh            prints the wheel's path as its last line
# The sbt step also publishes both Maven artifacts (POM, shaded JAR, sources, javadoc) to the folder repository
# python/build/maven-repo, which the tests resolve the coordinates from.
# With SPARK_KINESIS_SKIP_SBT=1 it skips the sbt step: the caller (bin/test) built both JARs, published them and wrote
# the options JSON (python/build/options.json) in its own sbt run.
set -euo pipefail
python_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$python_dir/.." && pwd)"
package="$python_dir/src/pyspark_kinesis"
python="${PYTHON:-python3}"
version="$(tr -d '[:space:]' < "$root/VERSION")"

command -v "$python" >/dev/null || { echo "build-wheel.sh: $python not found; install Python 3.9 or newer" >&2; exit 1; }
mkdir -p "$python_dir/build"
cd "$root"
[ "${SPARK_KINESIS_SKIP_SBT:-}" = 1 ] || build/sbt -Dsparkkinesis.publishTo="$python_dir/build/maven-repo" +connector/publish \
  "connector/runMain io.github.sparkkinesis.options.OptionsDocs --json $python_dir/build/options.json" >&2
[ -f "$python_dir/build/options.json" ] || { echo "build-wheel.sh: $python_dir/build/options.json was not built" >&2; exit 1; }

rm -rf "$package/jars"
mkdir -p "$package/jars"
assemblies=()
for scala in 2.12 2.13; do
  jar="connector/target/scala-$scala/spark-kinesis-assembly_$scala-$version.jar"
  [ -f "$jar" ] || { echo "build-wheel.sh: $jar was not built" >&2; exit 1; }
  assemblies+=("$jar")
done
"$python" "$python_dir/tools/split_jars.py" "$package/jars" "$version" "${assemblies[@]}"
cp LICENSE NOTICE "$python_dir/"
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
# The daemons and dependencies stored once keep the wheel near 45 MB, well under PyPI's default 100 MB per file;
# over 60 MB means something is packed twice.
mb=$((1000 * 1000))
[ "$size" -lt $((60 * mb)) ] || { echo "build-wheel.sh: $wheel is $size bytes, over 60 MB" >&2; exit 1; }
echo "build-wheel.sh: built $wheel ($((size / mb)) MB)" >&2
echo "$wheel"
